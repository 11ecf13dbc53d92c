/** Reading Herald's /openapi.json in tests: its operations, a standard validator for its schemas, its examples. */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export type Json = Record<string, any>;

export interface Operation {
  /** "POST /instances/{instance_id}/webhooks" */
  name: string;
  method: string;
  path: string;
  op: Json;
}

export function operations(doc: Json): Operation[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      name: `${method.toUpperCase()} ${path}`,
      method: method.toUpperCase(),
      path,
      op,
    })),
  );
}

/** The error causes an operation declares, by name: status and example body (from its responses' examples). */
export function declaredCauses(op: Json): Map<string, { status: number; example: Json }> {
  const causes = new Map<string, { status: number; example: Json }>();
  for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
    if (Number(status) < 400) continue;
    const examples = response.content?.['application/json']?.examples ?? {};
    for (const [name, example] of Object.entries(examples as Record<string, Json>)) {
      causes.set(name, { status: Number(status), example: example.value });
    }
  }
  return causes;
}

const pointerPart = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Validates a value against a schema of the document, given by its JSON pointer parts; null when valid. */
export function schemaValidator(doc: Json): (pointer: string[], value: unknown) => string | null {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats.default(ajv);
  // The document itself, so that every `#/components/schemas/…` reference resolves within it.
  ajv.addSchema({ ...doc, $id: 'openapi.json' });
  return (pointer, value) => {
    const validate = ajv.compile({ $ref: `openapi.json#/${pointer.map(pointerPart).join('/')}` });
    return validate(value) ? null : ajv.errorsText(validate.errors);
  };
}

/** A path with its {params} filled in. */
export const fillPath = (path: string, ids: Record<string, string>) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (!(name in ids)) throw new Error(`no value for {${name}} in ${path}`);
    return ids[name];
  });

/** Ids and times in a text made alike: "webhook whk_x does not exist" and "webhook whk_y does not exist" are equal. */
export const withoutIds = (text: string) =>
  text
    .replace(/\b(ins|whk|dlv|evt|key|med|lnk|src)_[A-Za-z0-9_-]+/g, '$1_…')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>');
