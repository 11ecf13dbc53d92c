/**
 * Schema of the PostgreSQL store. Each entry runs once, in order, recorded in herald_migrations. Every process
 * migrates at start-up: an advisory lock (per schema) makes the others wait, then find nothing left to do.
 */
import type { Sql } from 'postgres';

export const MIGRATIONS: string[] = [
  `
  CREATE TABLE settings (name text PRIMARY KEY, value text NOT NULL);

  CREATE TABLE instances (
    instance_id text PRIMARY KEY,
    name text NOT NULL,
    status text NOT NULL,
    phone text,
    created_at bigint NOT NULL
  );

  CREATE TABLE api_keys (
    key_id text PRIMARY KEY,
    instance_id text NOT NULL REFERENCES instances(instance_id) ON DELETE CASCADE,
    key_hash text NOT NULL UNIQUE,
    created_at bigint NOT NULL
  );
  CREATE INDEX api_keys_instance ON api_keys(instance_id);

  CREATE TABLE webhooks (
    webhook_id text PRIMARY KEY,
    instance_id text NOT NULL REFERENCES instances(instance_id) ON DELETE CASCADE,
    destination_url text NOT NULL,
    events text NOT NULL,
    ignore_status boolean NOT NULL,
    enabled boolean NOT NULL,
    secret_sealed text,
    disabled_reason text,
    disabled_at bigint,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
  );
  CREATE INDEX webhooks_instance ON webhooks(instance_id);

  CREATE TABLE events (
    event_id text PRIMARY KEY,
    instance_id text NOT NULL REFERENCES instances(instance_id) ON DELETE CASCADE,
    event text NOT NULL,
    body text NOT NULL,
    deliveries integer NOT NULL,
    created_at bigint NOT NULL
  );
  CREATE INDEX events_instance ON events(instance_id);

  CREATE TABLE deliveries (
    -- The log's order; indexed with the instance only (deliveries_log): each index costs every queue update.
    seq bigint GENERATED ALWAYS AS IDENTITY,
    delivery_id text PRIMARY KEY,
    event_id text NOT NULL REFERENCES events(event_id) ON DELETE CASCADE,
    instance_id text NOT NULL,
    webhook_id text NOT NULL REFERENCES webhooks(webhook_id) ON DELETE CASCADE,
    event text NOT NULL,
    status text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    cycle_attempts integer NOT NULL DEFAULT 0,
    next_trigger text NOT NULL DEFAULT 'scheduled',
    created_at bigint NOT NULL,
    last_attempt_at bigint,
    next_attempt_at bigint,
    last_status_code integer,
    last_error text,
    failure_reason text,
    lease_token text
  );
  -- The queue: only pending rows, ordered by when they are due (a lease moves that time forward).
  CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE status = 'pending';
  CREATE INDEX deliveries_log ON deliveries(instance_id, seq);
  -- Claims read each webhook's own due range, so a webhook at its in-flight cap costs nothing to skip.
  CREATE INDEX deliveries_webhook_due ON deliveries(webhook_id, next_attempt_at) WHERE status = 'pending';
  -- What every worker holds of a webhook right now: the in-flight cap is counted across processes.
  CREATE INDEX deliveries_leased ON deliveries(webhook_id, next_attempt_at) WHERE lease_token IS NOT NULL;
  CREATE INDEX deliveries_webhook ON deliveries(webhook_id, status);
  CREATE INDEX deliveries_event ON deliveries(event_id);

  CREATE TABLE attempts (
    delivery_id text NOT NULL REFERENCES deliveries(delivery_id) ON DELETE CASCADE,
    attempt integer NOT NULL,
    trigger text NOT NULL,
    started_at bigint NOT NULL,
    duration_ms integer NOT NULL,
    status_code integer,
    error text,
    response_body text,
    next_attempt_at bigint,
    next_attempt_reason text
  );
  -- Not unique: an attempt whose lease was lost to another sender is still logged.
  CREATE INDEX attempts_delivery ON attempts(delivery_id, attempt);
  `,
  // Retention: finished deliveries by the time of their last attempt, and events by age (orphans are swept).
  `
  CREATE INDEX deliveries_finished ON deliveries ((COALESCE(last_attempt_at, created_at))) WHERE status <> 'pending';
  CREATE INDEX events_created ON events(created_at);
  `,
  // Engine traffic: the HMAC key WAHA signs its webhook with (sealed), and engine media to download before an
  // event's deliveries start (they wait with next_attempt_at NULL). A job's lease works as a delivery's does.
  `
  ALTER TABLE instances ADD COLUMN engine_hmac_sealed text;
  CREATE TABLE media_jobs (
    event_id text PRIMARY KEY REFERENCES events(event_id) ON DELETE CASCADE,
    url text NOT NULL,
    mimetype text,
    filename text,
    tries integer NOT NULL DEFAULT 0,
    next_try_at bigint NOT NULL,
    lease_token text
  );
  CREATE INDEX media_jobs_due ON media_jobs(next_try_at);
  `,
  // Webhook controls: a payload filter, its own headers (sealed), a rate limit and the next free slot (shared by
  // every worker), a rotated-out secret honoured until its grace ends, and health kept by the outcomes. The slot
  // and the health are rows of their own: an outcome must not wait for ingest's share lock on the webhook.
  `
  ALTER TABLE webhooks ADD COLUMN filter text;
  ALTER TABLE webhooks ADD COLUMN headers_sealed text;
  ALTER TABLE webhooks ADD COLUMN rate_limit integer;
  ALTER TABLE webhooks ADD COLUMN previous_secret_sealed text;
  ALTER TABLE webhooks ADD COLUMN previous_secret_until bigint;
  CREATE TABLE webhook_slots (
    webhook_id text PRIMARY KEY REFERENCES webhooks(webhook_id) ON DELETE CASCADE,
    next_at double precision NOT NULL
  );
  CREATE TABLE webhook_health (
    webhook_id text PRIMARY KEY REFERENCES webhooks(webhook_id) ON DELETE CASCADE,
    last_delivered_at bigint,
    last_failed_at bigint,
    consecutive_failures integer NOT NULL DEFAULT 0
  );
  CREATE TABLE webhook_hours (
    webhook_id text NOT NULL REFERENCES webhooks(webhook_id) ON DELETE CASCADE,
    hour bigint NOT NULL,
    attempts integer NOT NULL,
    delivered integer NOT NULL,
    PRIMARY KEY (webhook_id, hour)
  );
  `,
  // Every event writes a delivery and every attempt a row, and a foreign key checks (and locks) the parent of each
  // row written: a tenth of PostgreSQL's time per delivery. These three keys are gone; what they deleted with the
  // parent, a statement trigger deletes, so any DELETE still takes a webhook's or an event's deliveries, and a
  // delivery's attempts, with it. No row is written without its parent: ingest inserts deliveries beside their
  // event, holding the webhooks FOR SHARE, and an outcome logs attempts only on the deliveries it has just updated.
  `
  ALTER TABLE deliveries DROP CONSTRAINT deliveries_event_id_fkey, DROP CONSTRAINT deliveries_webhook_id_fkey;
  ALTER TABLE attempts DROP CONSTRAINT attempts_delivery_id_fkey;
  -- Deletes the rows of table TG_ARGV[0] whose column TG_ARGV[1] names a deleted row, in the parent's schema.
  CREATE FUNCTION herald_cascade() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    EXECUTE format('DELETE FROM %I.%I c USING gone WHERE c.%I = gone.%I',
      TG_TABLE_SCHEMA, TG_ARGV[0], TG_ARGV[1], TG_ARGV[1]);
    RETURN NULL;
  END $$;
  CREATE TRIGGER webhooks_cascade AFTER DELETE ON webhooks REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION herald_cascade('deliveries', 'webhook_id');
  CREATE TRIGGER events_cascade AFTER DELETE ON events REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION herald_cascade('deliveries', 'event_id');
  CREATE TRIGGER deliveries_cascade AFTER DELETE ON deliveries REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION herald_cascade('attempts', 'delivery_id');
  `,
  // The index of due times leaves leased deliveries out, so that a claim (which sets the lease) writes no entry in
  // it; it is read only for the next due time, when a worker idles.
  `
  DROP INDEX deliveries_due;
  CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE status = 'pending' AND lease_token IS NULL;
  `,
  // The engine's repeats: which event first reported a thing (engine-dedupe.ts), per instance, and when.
  `
  CREATE TABLE engine_repeats (
    instance_id text NOT NULL REFERENCES instances(instance_id) ON DELETE CASCADE,
    repeat_key text NOT NULL,
    event_id text NOT NULL,
    seen_at bigint NOT NULL,
    PRIMARY KEY (instance_id, repeat_key)
  );
  CREATE INDEX engine_repeats_seen ON engine_repeats(seen_at);
  `,
  // Phones learned for hidden ids (domain/lid-phone.ts), per instance.
  `
  CREATE TABLE lid_phones (
    instance_id text NOT NULL REFERENCES instances(instance_id) ON DELETE CASCADE,
    lid text NOT NULL,
    phone text NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (instance_id, lid)
  );
  `,
  // Why an event's engine media was not stored (the delivery detail's media_failure), and the engine's own error,
  // which a media job records without downloading.
  `
  ALTER TABLE events ADD COLUMN media_failure text;
  ALTER TABLE media_jobs ADD COLUMN engine_error text;
  `,
  // Standard Webhooks' headers beside Herald's, per webhook.
  `
  ALTER TABLE webhooks ADD COLUMN standard_webhooks boolean NOT NULL DEFAULT false;
  `,
  // The chat of each event (domain/chat-key.ts), on its deliveries too; null for those stored before.
  `
  ALTER TABLE events ADD COLUMN chat text;
  ALTER TABLE deliveries ADD COLUMN chat text;
  `,
  // Portal links: one instance's session page for someone outside, by a token kept hashed.
  `
  CREATE TABLE portal_links (
    link_id text PRIMARY KEY,
    instance_id text NOT NULL REFERENCES instances(instance_id) ON DELETE CASCADE,
    token_hash text NOT NULL UNIQUE,
    read_only boolean NOT NULL,
    expires_at bigint NOT NULL,
    created_at bigint NOT NULL
  );
  CREATE INDEX portal_links_instance ON portal_links(instance_id, expires_at);
  `,
  // Operational events: when a webhook's streak of failures began and when it was announced as failing; and the
  // operator's destination, a webhook of no instance.
  `
  ALTER TABLE webhook_health ADD COLUMN failing_since bigint;
  ALTER TABLE webhook_health ADD COLUMN failing_announced_at bigint;
  ALTER TABLE webhooks ALTER COLUMN instance_id DROP NOT NULL;
  `,
  // Ordered delivery per chat: a webhook's ordering, and a delivery's place in its chat's queue when a redelivery
  // moved it behind those waiting (null: its seq). Only a chat's head is ever due; the next is found by this index.
  `
  ALTER TABLE webhooks ADD COLUMN ordering text NOT NULL DEFAULT 'none';
  ALTER TABLE deliveries ADD COLUMN queue_seq bigint;
  CREATE INDEX deliveries_chat_queue ON deliveries(webhook_id, chat, COALESCE(queue_seq, seq))
    WHERE status = 'pending';
  `,
  // A broker destination's URL with its password, sealed; destination_url keeps it as **** (shown and logged).
  `
  ALTER TABLE webhooks ADD COLUMN destination_sealed text;
  `,
  // The tenant boundary: a key's scope; the key a portal link was made with (its links die with it; null: the
  // admin's); where an instance's engine media may come from; and the event the instance's status came from, so that
  // the newest session.status wins whatever order concurrent posts commit in.
  `
  ALTER TABLE api_keys ADD COLUMN scope text NOT NULL DEFAULT 'manage';
  ALTER TABLE portal_links ADD COLUMN key_id text REFERENCES api_keys(key_id) ON DELETE CASCADE;
  CREATE INDEX portal_links_key ON portal_links(key_id);
  ALTER TABLE instances ADD COLUMN engine_media_prefix text;
  ALTER TABLE instances ADD COLUMN status_at bigint;
  ALTER TABLE instances ADD COLUMN status_event_id text;
  `,
  // Whether a media job's event came through an engine endpoint: only then may ENGINE_MEDIA_HEADERS go with the
  // download. Jobs stored before are taken as not (no headers): the safe reading.
  `
  ALTER TABLE media_jobs ADD COLUMN via_engine boolean NOT NULL DEFAULT false;
  `,
  // The W3C traceparent of the ingest that stored an event (tracing on): every attempt's span joins that trace,
  // whichever process makes it and however much later. Null for events stored with tracing off.
  `
  ALTER TABLE events ADD COLUMN trace_context text;
  `,
  // Sources: queues Herald consumes events from (the url shown with ****, the real one sealed), the state the last
  // process to report saw, their counters shared by every process, and the messages parked as never ingestible.
  `
  CREATE TABLE sources (
    source_id text PRIMARY KEY,
    url text NOT NULL,
    url_sealed text,
    format text NOT NULL,
    instance_id text REFERENCES instances(instance_id) ON DELETE CASCADE,
    state text NOT NULL DEFAULT 'connecting',
    last_error text,
    received bigint NOT NULL DEFAULT 0,
    ingested bigint NOT NULL DEFAULT 0,
    duplicates bigint NOT NULL DEFAULT 0,
    parked bigint NOT NULL DEFAULT 0,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
  );
  CREATE TABLE source_parked (
    seq bigserial PRIMARY KEY,
    source_id text NOT NULL REFERENCES sources(source_id) ON DELETE CASCADE,
    parked_at bigint NOT NULL,
    reason text NOT NULL,
    body text NOT NULL
  );
  CREATE INDEX source_parked_source ON source_parked(source_id, seq);
  `,
  // Delivery health that speaks of deliveries: per hour, those that ended failed and the failed attempts tried
  // again (webhook_hours; delivered already counted deliveries); and a webhook's attempts of a window found from its
  // deliveries by their last attempt, for the stats' hours without reading the whole log.
  `
  ALTER TABLE webhook_hours ADD COLUMN failed integer NOT NULL DEFAULT 0;
  ALTER TABLE webhook_hours ADD COLUMN retried integer NOT NULL DEFAULT 0;
  CREATE INDEX deliveries_webhook_attempted ON deliveries(webhook_id, last_attempt_at) WHERE last_attempt_at IS NOT NULL;
  `,
];

/** Brings the connection's schema up to date; safe when many processes start at once. */
export async function migrate(sql: Sql<Record<string, never>>): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('herald.migrate.' || current_schema()))`;
    await tx`CREATE TABLE IF NOT EXISTS herald_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)`;
    const [{ done }] = await tx<{ done: number }[]>`
      SELECT COALESCE(max(version), 0)::integer AS done FROM herald_migrations`;
    for (let v = done; v < MIGRATIONS.length; v++) {
      await tx.unsafe(MIGRATIONS[v]);
      await tx`INSERT INTO herald_migrations (version, applied_at) VALUES (${v + 1}::integer, ${Date.now()}::bigint)`;
    }
  });
}
