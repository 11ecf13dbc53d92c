import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Seals signing secrets at rest with AES-256-GCM. The sealed form is
 * `v1.<iv>.<tag>.<ciphertext>` (base64url), so a future key rotation can tell versions apart.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SECRET_KEY must be 32 bytes');
    this.#key = key;
  }

  /** A separate 32-byte key for another purpose (HKDF with `info`), so this key itself never leaves the box. */
  deriveKey(info: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), info, 32));
  }

  /**
   * Names the key without revealing it (an HMAC of a fixed text), so the store can record which key its secrets
   * are sealed under, and a start with the wrong key fails loudly instead of every signed delivery failing.
   */
  fingerprint(): string {
    return createHmac('sha256', this.#key).update('herald secret-key check v1').digest('hex').slice(0, 32);
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), data]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('unreadable sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }
}
