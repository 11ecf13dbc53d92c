/** How a store call fails, as the API and the workers tell the cases apart. */

/** A write refused because of what is already stored; the whole operation is rolled back. */
export class StoreConflict extends Error {}

/** A write for an instance that does not exist (never created, or deleted); nothing is stored. */
export class InstanceMissing extends Error {}

/**
 * The database could not do the work now, for a reason of its own (connection lost or refused, disk full): the
 * call's writes are not known to be stored, and the same call may simply be made again later.
 */
export class StoreUnavailable extends Error {
  /** What went wrong, in the database's words (e.g. "database or disk is full (SQLITE_FULL)"). */
  readonly reason: string;

  constructor(reason: string, options?: ErrorOptions) {
    super(`database unavailable: ${reason}`, options);
    this.reason = reason;
  }
}
