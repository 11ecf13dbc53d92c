/** A client's value quoted in an error message, cut short: a 100 KB typo must not come back as a 100 KB message. */
export function quote(value: string, max = 64): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value);
}
