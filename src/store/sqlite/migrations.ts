/** Schema of the embedded store. Each entry runs once, in order; `PRAGMA user_version` counts them. */
export const MIGRATIONS: string[] = [
  `
  CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);

  CREATE TABLE instances (
    instance_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    phone TEXT,
    created_at INTEGER NOT NULL
  );

  CREATE TABLE api_keys (
    key_id TEXT PRIMARY KEY,
    instance_id TEXT NOT NULL REFERENCES instances(instance_id) ON DELETE CASCADE,
    key_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
  );

  CREATE TABLE webhooks (
    webhook_id TEXT PRIMARY KEY,
    instance_id TEXT NOT NULL REFERENCES instances(instance_id) ON DELETE CASCADE,
    destination_url TEXT NOT NULL,
    events TEXT NOT NULL,
    ignore_status INTEGER NOT NULL,
    enabled INTEGER NOT NULL,
    secret_sealed TEXT,
    disabled_reason TEXT,
    disabled_at INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX webhooks_instance ON webhooks(instance_id);

  CREATE TABLE events (
    event_id TEXT PRIMARY KEY,
    instance_id TEXT NOT NULL REFERENCES instances(instance_id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    body TEXT NOT NULL,
    deliveries INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  );

  CREATE TABLE deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id TEXT NOT NULL UNIQUE,
    event_id TEXT NOT NULL REFERENCES events(event_id) ON DELETE CASCADE,
    instance_id TEXT NOT NULL,
    webhook_id TEXT NOT NULL REFERENCES webhooks(webhook_id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    cycle_attempts INTEGER NOT NULL DEFAULT 0,
    next_trigger TEXT NOT NULL DEFAULT 'scheduled',
    created_at INTEGER NOT NULL,
    last_attempt_at INTEGER,
    next_attempt_at INTEGER,
    last_status_code INTEGER,
    last_error TEXT,
    failure_reason TEXT,
    lease_token TEXT
  );
  -- The queue: only pending rows, ordered by when they are due (a lease moves that time forward).
  CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE status = 'pending';
  CREATE INDEX deliveries_log ON deliveries(instance_id, seq);
  -- Claims read each webhook's own due range, so a webhook at its in-flight cap costs nothing to skip.
  CREATE INDEX deliveries_webhook_due ON deliveries(webhook_id, next_attempt_at) WHERE status = 'pending';
  CREATE INDEX deliveries_webhook ON deliveries(webhook_id, status);
  CREATE INDEX deliveries_event ON deliveries(event_id);

  CREATE TABLE attempts (
    delivery_id TEXT NOT NULL REFERENCES deliveries(delivery_id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    trigger TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    status_code INTEGER,
    error TEXT,
    response_body TEXT,
    next_attempt_at INTEGER,
    next_attempt_reason TEXT
  );
  -- Not unique: an attempt whose lease was lost to another sender is still logged.
  CREATE INDEX attempts_delivery ON attempts(delivery_id, attempt);
  `,
  // Retention: finished deliveries by the time of their last attempt, and events by age (orphans are swept).
  `
  CREATE INDEX deliveries_finished ON deliveries(COALESCE(last_attempt_at, created_at)) WHERE status <> 'pending';
  CREATE INDEX events_created ON events(created_at);
  `,
  // Leases are held in memory (leases.ts): one process owns the database.
  `
  ALTER TABLE deliveries DROP COLUMN lease_token;
  `,
  // Engine traffic: the HMAC key WAHA signs its webhook with (sealed), and engine media to download before an
  // event's deliveries start (they wait with next_attempt_at NULL). Claims of jobs are held in memory, as leases are.
  `
  ALTER TABLE instances ADD COLUMN engine_hmac_sealed TEXT;
  CREATE TABLE media_jobs (
    event_id TEXT PRIMARY KEY REFERENCES events(event_id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    mimetype TEXT,
    filename TEXT,
    tries INTEGER NOT NULL DEFAULT 0,
    next_try_at INTEGER NOT NULL
  );
  CREATE INDEX media_jobs_due ON media_jobs(next_try_at);
  `,
  // Webhook controls: a payload filter, its own headers (sealed), a rate limit and the slot it is at (in memory on
  // SQLite: one process), a rotated-out secret honoured until its grace ends, and health kept by the outcomes.
  `
  ALTER TABLE webhooks ADD COLUMN filter TEXT;
  ALTER TABLE webhooks ADD COLUMN headers_sealed TEXT;
  ALTER TABLE webhooks ADD COLUMN rate_limit INTEGER;
  ALTER TABLE webhooks ADD COLUMN previous_secret_sealed TEXT;
  ALTER TABLE webhooks ADD COLUMN previous_secret_until INTEGER;
  CREATE TABLE webhook_health (
    webhook_id TEXT PRIMARY KEY REFERENCES webhooks(webhook_id) ON DELETE CASCADE,
    last_delivered_at INTEGER,
    last_failed_at INTEGER,
    consecutive_failures INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE webhook_hours (
    webhook_id TEXT NOT NULL REFERENCES webhooks(webhook_id) ON DELETE CASCADE,
    hour INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    delivered INTEGER NOT NULL,
    PRIMARY KEY (webhook_id, hour)
  );
  `,
  // The engine's repeats: which event first reported a thing (engine-dedupe.ts), per instance, and when.
  `
  CREATE TABLE engine_repeats (
    instance_id TEXT NOT NULL REFERENCES instances(instance_id) ON DELETE CASCADE,
    repeat_key TEXT NOT NULL,
    event_id TEXT NOT NULL,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (instance_id, repeat_key)
  );
  CREATE INDEX engine_repeats_seen ON engine_repeats(seen_at);
  `,
  // Phones learned for hidden ids (domain/lid-phone.ts), per instance.
  `
  CREATE TABLE lid_phones (
    instance_id TEXT NOT NULL REFERENCES instances(instance_id) ON DELETE CASCADE,
    lid TEXT NOT NULL,
    phone TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (instance_id, lid)
  );
  `,
  // Why an event's engine media was not stored (the delivery detail's media_failure), and the engine's own error,
  // which a media job records without downloading.
  `
  ALTER TABLE events ADD COLUMN media_failure TEXT;
  ALTER TABLE media_jobs ADD COLUMN engine_error TEXT;
  `,
  // Standard Webhooks' headers beside Herald's, per webhook.
  `
  ALTER TABLE webhooks ADD COLUMN standard_webhooks INTEGER NOT NULL DEFAULT 0;
  `,
  // The chat of each event (domain/chat-key.ts), on its deliveries too; null for those stored before.
  `
  ALTER TABLE events ADD COLUMN chat TEXT;
  ALTER TABLE deliveries ADD COLUMN chat TEXT;
  `,
  // Portal links: one instance's session page for someone outside, by a token kept hashed.
  `
  CREATE TABLE portal_links (
    link_id TEXT PRIMARY KEY,
    instance_id TEXT NOT NULL REFERENCES instances(instance_id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    read_only INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX portal_links_instance ON portal_links(instance_id, expires_at);
  `,
  // Operational events: when a webhook's streak of failures began and when it was announced as failing; and the
  // operator's destination, a webhook of no instance, which SQLite lets a column become only by a rebuilt table
  // (database.ts runs migrations with foreign keys off, so the drop deletes nothing that refers to it).
  `
  ALTER TABLE webhook_health ADD COLUMN failing_since INTEGER;
  ALTER TABLE webhook_health ADD COLUMN failing_announced_at INTEGER;
  CREATE TABLE webhooks_rebuilt (
    webhook_id TEXT PRIMARY KEY,
    instance_id TEXT REFERENCES instances(instance_id) ON DELETE CASCADE,
    destination_url TEXT NOT NULL,
    events TEXT NOT NULL,
    ignore_status INTEGER NOT NULL,
    enabled INTEGER NOT NULL,
    secret_sealed TEXT,
    disabled_reason TEXT,
    disabled_at INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    filter TEXT,
    headers_sealed TEXT,
    rate_limit INTEGER,
    previous_secret_sealed TEXT,
    previous_secret_until INTEGER,
    standard_webhooks INTEGER NOT NULL DEFAULT 0
  );
  INSERT INTO webhooks_rebuilt SELECT webhook_id, instance_id, destination_url, events, ignore_status, enabled,
    secret_sealed, disabled_reason, disabled_at, created_at, updated_at, filter, headers_sealed, rate_limit,
    previous_secret_sealed, previous_secret_until, standard_webhooks FROM webhooks;
  DROP TABLE webhooks;
  ALTER TABLE webhooks_rebuilt RENAME TO webhooks;
  CREATE INDEX webhooks_instance ON webhooks(instance_id);
  `,
  // Ordered delivery per chat: a webhook's ordering, and a delivery's place in its chat's queue when a redelivery
  // moved it behind those waiting (null: its seq). Only a chat's head is ever due; the next is found by this index.
  `
  ALTER TABLE webhooks ADD COLUMN ordering TEXT NOT NULL DEFAULT 'none';
  ALTER TABLE deliveries ADD COLUMN queue_seq INTEGER;
  CREATE INDEX deliveries_chat_queue ON deliveries(webhook_id, chat, COALESCE(queue_seq, seq))
    WHERE status = 'pending';
  `,
  // A broker destination's URL with its password, sealed; destination_url keeps it as **** (shown and logged).
  `
  ALTER TABLE webhooks ADD COLUMN destination_sealed TEXT;
  `,
  // The tenant boundary: a key's scope; the key a portal link was made with (its links die with it; null: the
  // admin's); where an instance's engine media may come from; and the event the instance's status came from, so that
  // the newest session.status wins whatever order concurrent posts commit in.
  `
  ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'manage';
  ALTER TABLE portal_links ADD COLUMN key_id TEXT REFERENCES api_keys(key_id) ON DELETE CASCADE;
  CREATE INDEX portal_links_key ON portal_links(key_id);
  ALTER TABLE instances ADD COLUMN engine_media_prefix TEXT;
  ALTER TABLE instances ADD COLUMN status_at INTEGER;
  ALTER TABLE instances ADD COLUMN status_event_id TEXT;
  `,
  // Whether a media job's event came through an engine endpoint: only then may ENGINE_MEDIA_HEADERS go with the
  // download. Jobs stored before are taken as not (no headers): the safe reading.
  `
  ALTER TABLE media_jobs ADD COLUMN via_engine INTEGER NOT NULL DEFAULT 0;
  `,
  // The W3C traceparent of the ingest that stored an event (tracing on): every attempt's span joins that trace,
  // whichever process makes it and however much later. Null for events stored with tracing off.
  `
  ALTER TABLE events ADD COLUMN trace_context TEXT;
  `,
  // Sources: queues Herald consumes events from (the url shown with ****, the real one sealed), the state the last
  // process to report saw, their counters shared by every process, and the messages parked as never ingestible.
  `
  CREATE TABLE sources (
    source_id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    url_sealed TEXT,
    format TEXT NOT NULL,
    instance_id TEXT REFERENCES instances(instance_id) ON DELETE CASCADE,
    state TEXT NOT NULL DEFAULT 'connecting',
    last_error TEXT,
    received INTEGER NOT NULL DEFAULT 0,
    ingested INTEGER NOT NULL DEFAULT 0,
    duplicates INTEGER NOT NULL DEFAULT 0,
    parked INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE source_parked (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    source_id TEXT NOT NULL REFERENCES sources(source_id) ON DELETE CASCADE,
    parked_at INTEGER NOT NULL,
    reason TEXT NOT NULL,
    body TEXT NOT NULL
  );
  CREATE INDEX source_parked_source ON source_parked(source_id, seq);
  `,
  // Delivery health that speaks of deliveries: per hour, those that ended failed and the failed attempts tried
  // again (webhook_hours; delivered already counted deliveries); and a webhook's attempts of a window found from its
  // deliveries by their last attempt, for the stats' hours without reading the whole log.
  `
  ALTER TABLE webhook_hours ADD COLUMN failed INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE webhook_hours ADD COLUMN retried INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX deliveries_webhook_attempted ON deliveries(webhook_id, last_attempt_at) WHERE last_attempt_at IS NOT NULL;
  `,
];
