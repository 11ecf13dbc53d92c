/**
 * An accepted payload turned into Herald's delivery format, as a pure step: what engines leave out or write
 * their own way is filled in or rewritten here, once, before the delivery body is serialised.
 *   message, message.any: from_phone from the sender's phone id (a hidden id's: lid-phone.ts), the media object in
 *                         Herald's states
 *   session.status:       the linked phone from the engine's own account (`me`) when the payload has none
 */
import { MESSAGE_KINDS } from './events.ts';
import { phoneOf, senderOf } from './jid.ts';
import { type LidPhones, senderLidPhone } from './lid-phone.ts';
import { settleMedia } from './media-object.ts';
import type { MediaDownload } from './types.ts';

type Obj = Record<string, unknown>;

export interface Normalised {
  payload: Obj;
  /** The engine's file to download before the deliveries start, or null when the media is settled already. */
  download: MediaDownload | null;
}

const NONE: LidPhones = new Map();

/**
 * `sessionPhone` is the session's own phone number when the engine said it (WAHA's `me.id`), else null; `learned`
 * the phones the instance learned for hidden ids. The payload is already valid for its kind (events.ts); it is never
 * changed in place.
 */
export function normalise(
  kind: string,
  payload: Obj,
  sessionPhone: string | null,
  learned: LidPhones = NONE,
): Normalised {
  if (MESSAGE_KINDS.includes(kind)) return settleMedia(withFromPhone(payload, sessionPhone, learned));
  if (kind === 'session.status' && payload.phone == null && sessionPhone !== null) {
    return { payload: { ...payload, phone: sessionPhone }, download: null };
  }
  return { payload, download: null };
}

/**
 * from_phone: the digits of the sender's phone id, which is the chat for a private chat and the
 * `participant` in a group or a broadcast (stories). A sender known by a hidden id (`@lid`) gets the phone the
 * engine sent beside it, else the one the instance learned; a channel has none.
 * The session's own messages are the session's: NOWEB and GOWS put the recipient's chat in `from`.
 */
function withFromPhone(payload: Obj, sessionPhone: string | null, learned: LidPhones): Obj {
  if (payload.from_phone != null) return payload;
  if (payload.fromMe === true && sessionPhone !== null) return { ...payload, from_phone: sessionPhone };
  const phone = phoneOf(senderOf(payload)) ?? senderLidPhone(payload, learned);
  return phone === null ? payload : { ...payload, from_phone: phone };
}
