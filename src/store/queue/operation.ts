/**
 * An operation of the store that changes deliveries (events, outcomes, media jobs, the delivery log, webhooks): its
 * database, and the queue through which alone it changes a delivery's state (transitions.ts).
 */
export abstract class QueueOperation<Queue extends { readonly db: unknown }> {
  protected readonly db: Queue['db'];
  protected readonly queue: Queue;

  constructor(queue: Queue) {
    this.db = queue.db;
    this.queue = queue;
  }
}
