/**
 * Herald's HTTP API as TypeScript types: generated from /openapi.json by openapi-typescript. Do not edit; run
 * `npm run generate:client` (a test fails when this file and the API differ).
 */
export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness: the process answers */
        get: operations["checkLiveness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List instances */
        get: operations["listInstances"];
        put?: never;
        /** Create an instance (admin) */
        post: operations["createInstance"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get an instance: session status and phone */
        get: operations["getInstance"];
        put?: never;
        post?: never;
        /** Delete an instance with its webhooks, keys and deliveries (admin) */
        delete: operations["deleteInstance"];
        options?: never;
        head?: never;
        /** Rename an instance, or set or remove its engine HMAC key */
        patch: operations["updateInstance"];
        trace?: never;
    };
    "/instances/{instance_id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The delivery log, newest first, with filters */
        get: operations["listDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/deliveries/{delivery_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A delivery with its request body and every attempt */
        get: operations["getDelivery"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/deliveries/{delivery_id}/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Redeliver a failed delivery */
        post: operations["redeliverDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/deliveries/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Redeliver every failed delivery in a range */
        post: operations["redeliverFailedDeliveries"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/engine/evolution": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Publish an event from Evolution API's webhook */
        post: operations["receiveEvolutionEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/engine/evolution/{event}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Publish an event from Evolution API's webhook, by event (byEvents) */
        post: operations["receiveEvolutionEventByPath"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/engine/waha": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Publish an event from WAHA's own webhook */
        post: operations["receiveWahaEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Publish an event (the session engine); 202 once stored */
        post: operations["publishEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/events/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Publish up to 1000 events at once, all or nothing */
        post: operations["publishEventBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List instance keys, without their secret part (admin) */
        get: operations["listInstanceKeys"];
        put?: never;
        /** Create an instance key; the key is shown once (admin) */
        post: operations["createInstanceKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/keys/{key_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke an instance key (admin) */
        delete: operations["revokeInstanceKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/media": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Upload a media file: the raw bytes, with their Content-Type */
        post: operations["uploadMedia"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/portal-links": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the live portal links, without their tokens */
        get: operations["listPortalLinks"];
        put?: never;
        /** Make a portal link: the instance's session page for a customer */
        post: operations["createPortalLink"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/portal-links/{link_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a portal link at once */
        delete: operations["revokePortalLink"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the webhooks of an instance */
        get: operations["listWebhooks"];
        put?: never;
        /** Create a webhook; it starts disabled */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/webhooks/{webhook_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a webhook */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /** Delete a webhook, cancelling its pending deliveries */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        /** Replace the configuration of a webhook */
        patch: operations["updateWebhook"];
        trace?: never;
    };
    "/instances/{instance_id}/webhooks/{webhook_id}/enabled": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Enable or disable a webhook */
        post: operations["setWebhookEnabled"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/webhooks/{webhook_id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Rotate the signing secret; the old one keeps signing for a grace period */
        post: operations["rotateWebhookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/webhooks/{webhook_id}/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A webhook’s deliveries per hour
         * @description The last `hours` hours (default 24), oldest first, each starting on a UTC hour, the last the present one. A delivery counts in the hour its last attempt ended; an attempt in the hour it started. Answer times are over the attempts that were answered (an HTTP status or a broker’s acknowledgement).
         */
        get: operations["getWebhookStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/instances/{instance_id}/webhooks/{webhook_id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a sample event of a kind to this webhook */
        post: operations["sendTestEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/media/{media_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Download a media file through the signed url of a delivered payload (no API key) */
        get: operations["downloadMedia"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics (admin key)
         * @description Prometheus text format 0.0.4: herald_events_ingested_total{event}, herald_deliveries_total{outcome}, herald_attempts_total{result}, herald_attempt_duration_seconds, herald_queue_depth, herald_queue_due, herald_queue_oldest_due_age_seconds, herald_in_flight_attempts, herald_in_flight_attempts_by_webhook{webhook_id}, and the process_* / nodejs_* defaults.
         */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/portal-link": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The portal link whose token makes this call */
        get: operations["getPortalLink"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness: the database is reachable
         * @description Ready when the database answers. After a write failed for a reason of the database (connection lost, disk full), not ready (503) until no call has failed for 2 seconds and the database takes a write again, which this probe tries itself.
         */
        get: operations["checkReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sources": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the sources, with their state and counters (admin) */
        get: operations["listSources"];
        put?: never;
        /** Create a source: a queue Herald consumes events from (admin) */
        post: operations["createSource"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sources/{source_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a source: its state, last error and counters (admin) */
        get: operations["getSource"];
        put?: never;
        post?: never;
        /** Delete a source; every process stops consuming it (admin) */
        delete: operations["deleteSource"];
        options?: never;
        head?: never;
        /** Replace the configuration of a source; **** keeps its password (admin) */
        patch: operations["updateSource"];
        trace?: never;
    };
    "/sources/{source_id}/parked": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Messages of a source that can never be ingested, with the reason (admin) */
        get: operations["listParkedMessages"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "call.accepted": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * call.accepted
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "call.accepted",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "ABCDEF0123456789ABCDEF0123456789",
                     *         "from": "15557654321@c.us",
                     *         "timestamp": 1763719305,
                     *         "isVideo": false,
                     *         "isGroup": false,
                     *         "_data": {}
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-call.accepted"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "call.received": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * call.received
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "call.received",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "ABCDEF0123456789ABCDEF0123456789",
                     *         "from": "15557654321@c.us",
                     *         "timestamp": 1763719300,
                     *         "isVideo": false,
                     *         "isGroup": false,
                     *         "_data": {}
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-call.received"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "call.rejected": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * call.rejected
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "call.rejected",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "ABCDEF0123456789ABCDEF0123456789",
                     *         "from": "15557654321@c.us",
                     *         "timestamp": 1763719305,
                     *         "isVideo": false,
                     *         "isGroup": false,
                     *         "_data": {}
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-call.rejected"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "chat.archive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * chat.archive
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "chat.archive",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "15557654321@c.us",
                     *         "timestamp": 1763719500,
                     *         "archived": true
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-chat.archive"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    delivery: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A delivery, as your endpoint receives it
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "message",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "false_15557654321@c.us_3EB0C767D26A1D8F4A2B",
                     *         "timestamp": 1763719200,
                     *         "from": "15557654321@c.us",
                     *         "fromMe": false,
                     *         "source": "app",
                     *         "to": "15550001111@c.us",
                     *         "participant": null,
                     *         "body": "Hi! Is my order on its way?",
                     *         "hasMedia": false,
                     *         "ack": null,
                     *         "ackName": "UNKNOWN",
                     *         "replyTo": null,
                     *         "_data": {},
                     *         "from_phone": "15557654321"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        /** @description depends on the event kind */
                        payload: Record<string, never>;
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "delivery.failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * delivery.failed
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "delivery.failed",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "delivery_id": "dlv_01jd5q7k4w8y2b6d0f3h5k7m9p",
                     *         "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *         "event": "message",
                     *         "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
                     *         "failure_reason": "attempts_exhausted",
                     *         "last_status_code": 503,
                     *         "last_error": null
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-delivery.failed"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "engine.event": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * engine.event
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "engine.event",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "event": "messages.upsert",
                     *         "data": {
                     *           "type": "notify"
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-engine.event"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "event.response": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * event.response
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "event.response",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "false_15557654321@c.us_58BBBBBBBBBBBBBBBBBB",
                     *         "timestamp": 1763719200,
                     *         "from": "15557654321@c.us",
                     *         "fromMe": false,
                     *         "source": "app",
                     *         "to": "15550001111@c.us",
                     *         "participant": null,
                     *         "body": "",
                     *         "hasMedia": false,
                     *         "ack": null,
                     *         "ackName": "UNKNOWN",
                     *         "replyTo": null,
                     *         "_data": {},
                     *         "eventCreationKey": {
                     *           "id": "true_15557654321@c.us_3EB0EEEEEEEE12345678",
                     *           "to": "me",
                     *           "from": "15557654321@c.us",
                     *           "fromMe": false
                     *         },
                     *         "eventResponse": {
                     *           "response": "GOING",
                     *           "timestampMs": 1763719600429,
                     *           "extraGuestCount": 0
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-event.response"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "event.response.failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * event.response.failed
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "event.response.failed",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "false_15557654321@c.us_58BBBBBBBBBBBBBBBBBB",
                     *         "timestamp": 1763719200,
                     *         "from": "15557654321@c.us",
                     *         "fromMe": false,
                     *         "source": "app",
                     *         "to": "15550001111@c.us",
                     *         "participant": null,
                     *         "body": "",
                     *         "hasMedia": false,
                     *         "ack": null,
                     *         "ackName": "UNKNOWN",
                     *         "replyTo": null,
                     *         "_data": {},
                     *         "eventCreationKey": {
                     *           "id": "true_15557654321@c.us_3EB0EEEEEEEE12345678",
                     *           "to": "me",
                     *           "from": "15557654321@c.us",
                     *           "fromMe": false
                     *         },
                     *         "eventResponse": null
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-event.response.failed"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "group.join": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * group.join
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "group.join",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "group": {
                     *           "id": "120363041234567890@g.us",
                     *           "subject": "Order support"
                     *         },
                     *         "participant": "15550001111@c.us"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-group.join"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "group.leave": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * group.leave
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "group.leave",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "group": {
                     *           "id": "120363041234567890@g.us",
                     *           "subject": "Order support"
                     *         },
                     *         "participant": "15550001111@c.us"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-group.leave"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "group.participants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * group.participants
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "group.participants",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "group": {
                     *           "id": "120363041234567890@g.us",
                     *           "subject": "Order support"
                     *         },
                     *         "action": "add",
                     *         "participants": [
                     *           "15557654321@c.us"
                     *         ],
                     *         "by": "15550001111@c.us"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-group.participants"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "group.update": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * group.update
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "group.update",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "group": {
                     *           "id": "120363041234567890@g.us",
                     *           "subject": "Order support",
                     *           "description": "Questions about orders"
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-group.update"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "group.v2.join": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * group.v2.join
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "group.v2.join",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "group": {
                     *           "id": "120363041234567890@g.us",
                     *           "subject": "Order support",
                     *           "description": "Questions about orders",
                     *           "invite": "https://chat.whatsapp.com/invitecode",
                     *           "membersCanAddNewMember": true,
                     *           "membersCanSendMessages": true,
                     *           "newMembersApprovalRequired": false,
                     *           "participants": [
                     *             {
                     *               "id": "15557654321@c.us",
                     *               "role": "participant"
                     *             },
                     *             {
                     *               "id": "15550001111@c.us",
                     *               "role": "admin"
                     *             }
                     *           ]
                     *         },
                     *         "timestamp": 1763719400,
                     *         "_data": {}
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-group.v2.join"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "group.v2.leave": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * group.v2.leave
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "group.v2.leave",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "group": {
                     *           "id": "120363041234567890@g.us"
                     *         },
                     *         "timestamp": 1763719400,
                     *         "_data": {}
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-group.v2.leave"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "group.v2.participants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * group.v2.participants
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "group.v2.participants",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "type": "join",
                     *         "timestamp": 1763719400,
                     *         "group": {
                     *           "id": "120363041234567890@g.us"
                     *         },
                     *         "participants": [
                     *           {
                     *             "id": "15557654321@c.us",
                     *             "role": "participant"
                     *           }
                     *         ],
                     *         "_data": {}
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-group.v2.participants"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "group.v2.update": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * group.v2.update
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "group.v2.update",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "group": {
                     *           "id": "120363041234567890@g.us",
                     *           "subject": "Order support (EU)"
                     *         },
                     *         "timestamp": 1763719400,
                     *         "_data": {}
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-group.v2.update"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "label.chat.added": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * label.chat.added
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "label.chat.added",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "labelId": "3",
                     *         "chatId": "15557654321@c.us",
                     *         "label": {
                     *           "id": "3",
                     *           "name": "Paid",
                     *           "color": 2,
                     *           "colorHex": "#64c4ff"
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-label.chat.added"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "label.chat.deleted": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * label.chat.deleted
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "label.chat.deleted",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "labelId": "3",
                     *         "chatId": "15557654321@c.us",
                     *         "label": null
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-label.chat.deleted"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "label.deleted": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * label.deleted
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "label.deleted",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "3",
                     *         "name": "Paid",
                     *         "color": 2,
                     *         "colorHex": "#64c4ff"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-label.deleted"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "label.upsert": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * label.upsert
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "label.upsert",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "3",
                     *         "name": "Paid",
                     *         "color": 2,
                     *         "colorHex": "#64c4ff"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-label.upsert"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    message: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * message
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "message",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "false_15557654321@c.us_3EB0C767D26A1D8F4A2B",
                     *         "timestamp": 1763719200,
                     *         "from": "15557654321@c.us",
                     *         "fromMe": false,
                     *         "source": "app",
                     *         "to": "15550001111@c.us",
                     *         "participant": null,
                     *         "body": "Hi! Is my order on its way?",
                     *         "hasMedia": false,
                     *         "ack": null,
                     *         "ackName": "UNKNOWN",
                     *         "replyTo": null,
                     *         "_data": {},
                     *         "from_phone": "15557654321"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-message"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "message.ack": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * message.ack
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "message.ack",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "true_15557654321@c.us_3EB0A1B2C3D4E5F60718",
                     *         "from": "15550001111@c.us",
                     *         "to": "15557654321@c.us",
                     *         "participant": null,
                     *         "fromMe": true,
                     *         "ack": 3,
                     *         "ackName": "READ"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-message.ack"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "message.ack.group": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * message.ack.group
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "message.ack.group",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "true_120363041234567890@g.us_3EB0A1B2C3D4E5F60718_99999999999999@lid",
                     *         "from": "120363041234567890@g.us",
                     *         "participant": "99999999999999@lid",
                     *         "fromMe": true,
                     *         "ack": 3,
                     *         "ackName": "READ"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-message.ack.group"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "message.any": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * message.any
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "message.any",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "true_15557654321@c.us_3EB0A1B2C3D4E5F60718",
                     *         "timestamp": 1763719200,
                     *         "from": "15550001111@c.us",
                     *         "fromMe": true,
                     *         "source": "app",
                     *         "to": "15557654321@c.us",
                     *         "participant": null,
                     *         "body": "Yes, here is the tracking label.",
                     *         "hasMedia": true,
                     *         "ack": 1,
                     *         "ackName": "SERVER",
                     *         "replyTo": null,
                     *         "_data": {},
                     *         "from_phone": "15550001111",
                     *         "media": {
                     *           "status": "outgoing",
                     *           "mimetype": "image/jpeg"
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-message.any"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "message.edited": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * message.edited
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "message.edited",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "false_15557654321@c.us_3EB0E1D1E1D1E1D1E1D1",
                     *         "timestamp": 1763719200,
                     *         "from": "15557654321@c.us",
                     *         "fromMe": false,
                     *         "source": "app",
                     *         "to": "15550001111@c.us",
                     *         "participant": null,
                     *         "body": "Order 1042, not 1024",
                     *         "hasMedia": false,
                     *         "ack": null,
                     *         "ackName": "UNKNOWN",
                     *         "replyTo": null,
                     *         "_data": {},
                     *         "editedMessageId": "3EB0C767D26A1D8F4A2B"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-message.edited"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "message.reaction": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * message.reaction
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "message.reaction",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "false_15557654321@c.us_3EB0F00D5A5A5A5A5A5A",
                     *         "from": "15557654321@c.us",
                     *         "fromMe": false,
                     *         "participant": "15557654321@c.us",
                     *         "to": "15550001111@c.us",
                     *         "timestamp": 1763719290.853,
                     *         "reaction": {
                     *           "text": "👍",
                     *           "messageId": "true_15557654321@c.us_3EB0A1B2C3D4E5F60718"
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-message.reaction"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "message.revoked": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * message.revoked
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "message.revoked",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "after": {
                     *           "id": "false_15557654321@c.us_3EB0DE1EDE1EDE1EDE1E",
                     *           "timestamp": 1763719200,
                     *           "from": "15557654321@c.us",
                     *           "fromMe": false,
                     *           "source": "app",
                     *           "to": "15550001111@c.us",
                     *           "participant": null,
                     *           "body": "",
                     *           "hasMedia": false,
                     *           "ack": null,
                     *           "ackName": "UNKNOWN",
                     *           "replyTo": null,
                     *           "_data": {}
                     *         },
                     *         "before": null,
                     *         "revokedMessageId": "3EB0C767D26A1D8F4A2B"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-message.revoked"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "message.unknown": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * message.unknown
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "message.unknown",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "message_id": "msg_01JD5Q7H2K9X4M8N3P6R0T1V2W",
                     *         "client_reference": "order-1042-confirmation",
                     *         "to": "15557654321",
                     *         "type": "text",
                     *         "error_code": "TIMEOUT"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-message.unknown"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "message.waiting": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * message.waiting
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "message.waiting",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "false_15557654321@c.us_3EB0C767D26A1D8F4A2B",
                     *         "timestamp": 1763719200,
                     *         "from": "15557654321@c.us",
                     *         "fromMe": false,
                     *         "source": "app",
                     *         "to": "15550001111@c.us",
                     *         "participant": null,
                     *         "body": null,
                     *         "hasMedia": false,
                     *         "ack": null,
                     *         "ackName": "UNKNOWN",
                     *         "replyTo": null,
                     *         "_data": {}
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-message.waiting"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "poll.vote": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * poll.vote
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "poll.vote",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "vote": {
                     *           "id": "false_15557654321@c.us_3EB0B0B0B0B012345678",
                     *           "to": "me",
                     *           "from": "15557654321@c.us",
                     *           "fromMe": false,
                     *           "selectedOptions": [
                     *             "Tuesday"
                     *           ],
                     *           "timestamp": 1763719320
                     *         },
                     *         "poll": {
                     *           "id": "true_15557654321@c.us_3EB0C0C0C0C012345678",
                     *           "to": "15557654321@c.us",
                     *           "from": "me",
                     *           "fromMe": true
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-poll.vote"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "poll.vote.failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * poll.vote.failed
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "poll.vote.failed",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "vote": {
                     *           "id": "false_15557654321@c.us_3EB0B0B0B0B012345678",
                     *           "to": "me",
                     *           "from": "15557654321@c.us",
                     *           "fromMe": false,
                     *           "selectedOptions": [],
                     *           "timestamp": 1763719320
                     *         },
                     *         "poll": {
                     *           "id": "true_15557654321@c.us_3EB0C0C0C0C012345678",
                     *           "to": "15557654321@c.us",
                     *           "from": "me",
                     *           "fromMe": true
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-poll.vote.failed"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "presence.update": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * presence.update
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "presence.update",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "id": "15557654321@c.us",
                     *         "presences": [
                     *           {
                     *             "participant": "15557654321@c.us",
                     *             "lastKnownPresence": "typing",
                     *             "lastSeen": null
                     *           }
                     *         ]
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-presence.update"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "session.status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * session.status
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "session.status",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "status": "WORKING",
                     *         "statuses": [
                     *           {
                     *             "status": "STOPPED",
                     *             "timestamp": 1763719000000
                     *           },
                     *           {
                     *             "status": "STARTING",
                     *             "timestamp": 1763719001000
                     *           },
                     *           {
                     *             "status": "WORKING",
                     *             "timestamp": 1763719003000
                     *           }
                     *         ],
                     *         "data": null,
                     *         "phone": "15550001111"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-session.status"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "webhook.disabled": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * webhook.disabled
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "webhook.disabled",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
                     *         "destination_url": "https://hooks.example.com/herald",
                     *         "reason": "gone",
                     *         "disabled_at": "2026-11-21T10:05:00.000Z"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-webhook.disabled"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "webhook.failing": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * webhook.failing
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "webhook.failing",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
                     *         "destination_url": "https://hooks.example.com/herald",
                     *         "consecutive_failures": 20,
                     *         "failing_since": "2026-11-21T09:12:40.000Z"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-webhook.failing"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "webhook.recovered": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * webhook.recovered
         * @description Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the event_id of the body */
                    "X-Service-Event-Id": string;
                    /** @description v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret rotation two values separated by a space, accept either. Only when the webhook has a signing secret */
                    "X-Service-Signature"?: string;
                    /** @description seconds since the Unix epoch, at this attempt; refuse one more than 300 s away */
                    "X-Service-Timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "event": "webhook.recovered",
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *       "timestamp": 1795341600000,
                     *       "payload": {
                     *         "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
                     *         "destination_url": "https://hooks.example.com/herald",
                     *         "after_failures": 23
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description the event kind
                         * @enum {string}
                         */
                        event: "session.status" | "message" | "message.any" | "message.ack" | "message.reaction" | "message.edited" | "message.revoked" | "message.unknown" | "group.join" | "group.leave" | "group.update" | "group.participants" | "call.received" | "call.accepted" | "call.rejected" | "label.upsert" | "label.deleted" | "label.chat.added" | "label.chat.deleted" | "poll.vote" | "poll.vote.failed" | "presence.update" | "message.waiting" | "message.ack.group" | "group.v2.join" | "group.v2.leave" | "group.v2.update" | "group.v2.participants" | "chat.archive" | "event.response" | "event.response.failed" | "engine.event" | "webhook.disabled" | "webhook.failing" | "webhook.recovered" | "delivery.failed";
                        /** @description evt_…, the same on every attempt: deduplicate by it */
                        event_id: string;
                        /** @description ins_…, the session the event belongs to */
                        instance_id: string;
                        payload: components["schemas"]["payload-webhook.recovered"];
                        /** @description when the event occurred, in milliseconds since the Unix epoch */
                        timestamp: number;
                    };
                };
            };
            responses: {
                /** @description Delivered: nothing more is sent for this event */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Gone: the webhook is disabled, nothing more is sent until it is enabled again */
                410: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /**
         * @example {
         *       "attempt": 2,
         *       "trigger": "scheduled",
         *       "started_at": "2026-11-21T10:00:13.020Z",
         *       "duration_ms": 41,
         *       "status_code": 200,
         *       "error": null,
         *       "response_body": "ok",
         *       "next_attempt_at": null,
         *       "next_attempt_reason": null,
         *       "note": null
         *     }
         */
        Attempt: {
            attempt: number;
            duration_ms: number;
            error: string | null;
            next_attempt_at: string | null;
            next_attempt_reason: string | null;
            note: string | null;
            response_body: string | null;
            /** Format: date-time */
            started_at: string;
            status_code: number | null;
            trigger: "scheduled" | "manual";
        };
        /**
         * @example {
         *       "delivery_id": "dlv_01jd5q7h3a8b2c4d6e8f0g2h4j",
         *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
         *       "event": "message",
         *       "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
         *       "status": "delivered",
         *       "attempt_count": 2,
         *       "created_at": "2026-11-21T10:00:00.000Z",
         *       "last_attempt_at": "2026-11-21T10:00:05.120Z",
         *       "next_attempt_at": null,
         *       "last_status_code": 200,
         *       "last_error": null,
         *       "failure_reason": null,
         *       "chat": "14155550123@c.us",
         *       "waiting_for": null
         *     }
         */
        Delivery: {
            /** @description attempts made so far, over every cycle */
            attempt_count: number;
            chat: string | null;
            /** Format: date-time */
            created_at: string;
            delivery_id: string;
            event: string;
            event_id: string;
            failure_reason: string | null;
            last_attempt_at: string | null;
            last_error: string | null;
            last_status_code: number | null;
            next_attempt_at: string | null;
            status: "pending" | "delivered" | "failed";
            waiting_for: string | null;
            webhook_id: string;
        };
        /**
         * @example {
         *       "delivery_id": "dlv_01jd5q7h3a8b2c4d6e8f0g2h4j",
         *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
         *       "event": "message",
         *       "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
         *       "status": "delivered",
         *       "attempt_count": 2,
         *       "created_at": "2026-11-21T10:00:00.000Z",
         *       "last_attempt_at": "2026-11-21T10:00:05.120Z",
         *       "next_attempt_at": null,
         *       "last_status_code": 200,
         *       "last_error": null,
         *       "failure_reason": null,
         *       "chat": "14155550123@c.us",
         *       "waiting_for": null,
         *       "media_failure": null,
         *       "request_body": "{\"event_id\":\"evt_01jd5q7h2k9x4m8n3p6r0t1v2w\",\"event\":\"message\",\"instance_id\":\"ins_01jd5q7h2k9x4m8n3p6r0t1v2a\",\"timestamp\":1795341600000,\"payload\":{\"id\":\"false_15557654321@c.us_3EB0C767D26A1D8F4A2B\",\"from\":\"15557654321@c.us\",\"from_phone\":\"15557654321\",\"fromMe\":false,\"body\":\"Hi! Is my order on its way?\",\"hasMedia\":false}}",
         *       "attempts": [
         *         {
         *           "attempt": 1,
         *           "trigger": "scheduled",
         *           "started_at": "2026-11-21T10:00:00.012Z",
         *           "duration_ms": 8001,
         *           "status_code": null,
         *           "error": "timeout",
         *           "response_body": null,
         *           "next_attempt_at": "2026-11-21T10:00:13.013Z",
         *           "next_attempt_reason": "schedule",
         *           "note": null
         *         },
         *         {
         *           "attempt": 2,
         *           "trigger": "scheduled",
         *           "started_at": "2026-11-21T10:00:13.020Z",
         *           "duration_ms": 41,
         *           "status_code": 200,
         *           "error": null,
         *           "response_body": "ok",
         *           "next_attempt_at": null,
         *           "next_attempt_reason": null,
         *           "note": null
         *         }
         *       ]
         *     }
         */
        DeliveryDetail: {
            /** @description attempts made so far, over every cycle */
            attempt_count: number;
            attempts: components["schemas"]["Attempt"][];
            chat: string | null;
            /** Format: date-time */
            created_at: string;
            delivery_id: string;
            event: string;
            event_id: string;
            failure_reason: string | null;
            last_attempt_at: string | null;
            last_error: string | null;
            last_status_code: number | null;
            media_failure: string | null;
            next_attempt_at: string | null;
            request_body: string;
            status: "pending" | "delivered" | "failed";
            waiting_for: string | null;
            webhook_id: string;
        };
        Error: {
            error: {
                code: string;
                details: {
                    field: string;
                    message: string;
                }[];
                message: string;
            };
            /** @enum {boolean} */
            success: false;
        };
        EventAccepted: {
            /** @description deliveries queued: one per subscribed, enabled webhook */
            deliveries: number;
            /**
             * @description only from the engine's webhook: the engine reported this message again within ENGINE_DEDUPE_S; not stored
             * @enum {boolean}
             */
            duplicate?: true;
            /** @description the one given, or the one Herald made */
            event_id: string;
            /** @enum {boolean} */
            success: true;
        };
        /**
         * @example {
         *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
         *       "name": "Sales line",
         *       "status": "WORKING",
         *       "phone": "15550001111",
         *       "engine_hmac_key_set": true,
         *       "engine_media_prefix": null,
         *       "created_at": "2026-11-21T09:58:12.345Z",
         *       "counts": {
         *         "webhooks": 2,
         *         "failed_deliveries": 1,
         *         "redeliverable_deliveries": 1
         *       }
         *     }
         */
        Instance: {
            counts: {
                failed_deliveries: number;
                /** @description failed deliveries of enabled webhooks: what POST …/deliveries/redeliver restarts now */
                redeliverable_deliveries: number;
                webhooks: number;
            };
            /** Format: date-time */
            created_at: string;
            /** @description whether the engine's webhook must be signed (X-Webhook-Hmac); the key itself is never shown */
            engine_hmac_key_set: boolean;
            engine_media_prefix: string | null;
            instance_id: string;
            name: string;
            phone: string | null;
            /** @description last session.status published; STOPPED before any */
            status: string;
        };
        InstanceResponse: {
            instance: components["schemas"]["Instance"];
            /** @enum {boolean} */
            success: true;
        };
        /** @description as the engine sends it */
        "payload-call.accepted": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-call.received": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-call.rejected": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-chat.archive": {
            [key: string]: unknown;
        };
        /** @description A delivery failed by its attempts. Deliveries ended because their webhook was disabled are not reported one by one: webhook.disabled is. */
        "payload-delivery.failed": {
            delivery_id: string;
            /** @description that event's kind */
            event: string;
            /** @description the event it delivered */
            event_id: string;
            /**
             * @description why it stopped; it can be redelivered by hand
             * @enum {unknown}
             */
            failure_reason: "attempts_exhausted" | "gone" | "destination_not_allowed";
            /** @description why no answer came (timeout, connection_error…) */
            last_error: string | null;
            /** @description the last answer, null when none came */
            last_status_code: number | null;
            webhook_id: string;
        };
        /** @description as the engine sends it */
        "payload-engine.event": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-event.response": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-event.response.failed": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-group.join": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-group.leave": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-group.participants": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-group.update": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-group.v2.join": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-group.v2.leave": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-group.v2.participants": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-group.v2.update": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-label.chat.added": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-label.chat.deleted": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-label.deleted": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-label.upsert": {
            [key: string]: unknown;
        };
        "payload-message": {
            body?: string | null;
            from?: string | null;
            from_phone?: string | null;
            fromMe: boolean;
            hasMedia?: boolean | null;
            id: string;
            /** @description only when hasMedia is true */
            media?: (({
                /** Format: date-time */
                expires_at?: string | null;
                media_id?: string | null;
                mimetype?: string | null;
                /** @enum {unknown} */
                status?: "ready" | "too_large" | "failed" | "outgoing" | "unavailable" | null;
                /** Format: uri */
                url?: string | null;
            } & {
                [key: string]: unknown;
            }) | ({
                filename?: string | null;
                mimetype?: string | null;
                /** Format: uri */
                url?: string | null;
            } & {
                [key: string]: unknown;
            })) | null;
            participant?: string | null;
            to?: string | null;
        } & {
            [key: string]: unknown;
        };
        "payload-message.ack": {
            ack?: number | null;
            ackName?: string | null;
            from?: string | null;
            id: string;
            participant?: string | null;
            to?: string | null;
        } & {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-message.ack.group": {
            [key: string]: unknown;
        };
        "payload-message.any": {
            body?: string | null;
            from?: string | null;
            from_phone?: string | null;
            fromMe: boolean;
            hasMedia?: boolean | null;
            id: string;
            /** @description only when hasMedia is true */
            media?: (({
                /** Format: date-time */
                expires_at?: string | null;
                media_id?: string | null;
                mimetype?: string | null;
                /** @enum {unknown} */
                status?: "ready" | "too_large" | "failed" | "outgoing" | "unavailable" | null;
                /** Format: uri */
                url?: string | null;
            } & {
                [key: string]: unknown;
            }) | ({
                filename?: string | null;
                mimetype?: string | null;
                /** Format: uri */
                url?: string | null;
            } & {
                [key: string]: unknown;
            })) | null;
            participant?: string | null;
            to?: string | null;
        } & {
            [key: string]: unknown;
        };
        "payload-message.edited": {
            body?: string | null;
            editedMessageId?: string | null;
            from?: string | null;
            id: string;
            participant?: string | null;
            to?: string | null;
        } & {
            [key: string]: unknown;
        };
        "payload-message.reaction": {
            from?: string | null;
            id?: string | null;
            participant?: string | null;
            reaction: {
                messageId: string;
                text: string;
            } & {
                [key: string]: unknown;
            };
            to?: string | null;
        } & {
            [key: string]: unknown;
        };
        "payload-message.revoked": (({
            after?: Record<string, never> | null;
            before?: Record<string, never> | null;
            revokedMessageId?: string | null;
        } & {
            [key: string]: unknown;
        }) | unknown | unknown) | ({
            from?: string | null;
            id?: string | null;
            participant?: string | null;
            revokedMessageId: string;
            to?: string | null;
        } & {
            [key: string]: unknown;
        });
        "payload-message.unknown": {
            client_reference: string;
            /** @enum {unknown} */
            error_code: "TIMEOUT" | "WORKER_DIED";
            message_id: string;
            to: string;
            type: string;
        } & {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-message.waiting": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-poll.vote": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-poll.vote.failed": {
            [key: string]: unknown;
        };
        /** @description as the engine sends it */
        "payload-presence.update": {
            [key: string]: unknown;
        };
        "payload-session.status": {
            phone?: string | null;
            status: string;
        } & {
            [key: string]: unknown;
        };
        /** @description A webhook was disabled: nothing is sent to it until it is enabled again. */
        "payload-webhook.disabled": {
            /** @description the webhook's destination, as it was then */
            destination_url: string;
            /**
             * Format: date-time
             * @description when it was disabled
             */
            disabled_at: string;
            /**
             * @description gone: the destination answered 410; failing: its attempts all failed for DISABLE_AFTER_FAILING_S; manual: by request
             * @enum {unknown}
             */
            reason: "gone" | "failing" | "manual";
            /** @description the webhook the event is about */
            webhook_id: string;
        };
        /** @description A webhook's failed attempts in a row reached FAILING_AFTER; sent once per streak. */
        "payload-webhook.failing": {
            /** @description failed attempts in a row so far */
            consecutive_failures: number;
            /** @description the webhook's destination, as it was then */
            destination_url: string;
            /**
             * Format: date-time
             * @description when the first of them failed
             */
            failing_since: string;
            /** @description the webhook the event is about */
            webhook_id: string;
        };
        /** @description The first delivered attempt of a webhook after a webhook.failing. */
        "payload-webhook.recovered": {
            /** @description the failed attempts in a row it ended */
            after_failures: number;
            /** @description the webhook's destination, as it was then */
            destination_url: string;
            /** @description the webhook the event is about */
            webhook_id: string;
        };
        Success: {
            /** @enum {boolean} */
            success: true;
        };
        /**
         * @example {
         *       "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
         *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
         *       "destination_url": "https://hooks.example.com/herald",
         *       "events": [
         *         "message",
         *         "message.ack",
         *         "session.status"
         *       ],
         *       "ignore_status": true,
         *       "enabled": true,
         *       "client_sign_secret_set": true,
         *       "previous_secret_until": null,
         *       "filter": {
         *         "payload.fromMe": false
         *       },
         *       "headers": {
         *         "Authorization": "****"
         *       },
         *       "rate_limit": {
         *         "per_second": 20
         *       },
         *       "standard_webhooks": false,
         *       "ordering": "chat",
         *       "health": {
         *         "last_delivered_at": "2026-11-21T10:02:11.000Z",
         *         "last_failed_at": "2026-11-21T08:40:02.000Z",
         *         "consecutive_failures": 0,
         *         "attempts_24h": 1290,
         *         "delivered_24h": 1286,
         *         "failed_24h": 1,
         *         "retried_24h": 3
         *       },
         *       "disabled_reason": null,
         *       "disabled_at": null,
         *       "created_at": "2026-11-21T09:59:01.000Z",
         *       "updated_at": "2026-11-21T09:59:30.000Z"
         *     }
         */
        Webhook: {
            client_sign_secret_set: boolean;
            /** Format: date-time */
            created_at: string;
            destination_url: string;
            disabled_at: string | null;
            disabled_reason: string | null;
            enabled: boolean;
            events: string[];
            filter: {
                [key: string]: unknown;
            } | null;
            headers: {
                [key: string]: string;
            } | null;
            /** @description kept current by the outcomes of its attempts */
            health: {
                /** @description attempts that started in the current hour and the 23 before it */
                attempts_24h: number;
                /** @description failed attempts since the last delivery */
                consecutive_failures: number;
                /** @description deliveries that ended delivered in the same hours */
                delivered_24h: number;
                /** @description deliveries that ended failed in the same hours (after their last attempt) */
                failed_24h: number;
                last_delivered_at: string | null;
                last_failed_at: string | null;
                /** @description attempts of the same hours that failed and were retried */
                retried_24h: number;
            };
            /** @description Skip stories: true (the default) delivers no message from status@broadcast (WhatsApp "status" posts); false delivers them with the message events. Not about session.status, which is delivered whenever subscribed. */
            ignore_status: boolean;
            instance_id: string;
            /** @description "chat": one delivery of a chat in flight at a time, in the order its events were accepted (the next waits until the one before is delivered or failed); "none" (the default): each delivery on its own */
            ordering: "none" | "chat";
            previous_secret_until: string | null;
            rate_limit: {
                per_second: number;
            } | null;
            /** @description Standard Webhooks' headers (webhook-id, webhook-timestamp, webhook-signature) beside Herald's */
            standard_webhooks: boolean;
            /** Format: date-time */
            updated_at: string;
            webhook_id: string;
        };
        WebhookResponse: {
            /** @enum {boolean} */
            success: true;
            webhook: components["schemas"]["Webhook"];
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    checkLiveness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The process answers */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "status": "ok"
                     *     }
                     */
                    "application/json": {
                        /** @enum {string} */
                        status: "ok";
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listInstances: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every instance (an instance key: its own only), with its counts */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "instances": [
                     *         {
                     *           "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *           "name": "Sales line",
                     *           "status": "WORKING",
                     *           "phone": "15550001111",
                     *           "engine_hmac_key_set": true,
                     *           "engine_media_prefix": null,
                     *           "created_at": "2026-11-21T09:58:12.345Z",
                     *           "counts": {
                     *             "webhooks": 2,
                     *             "failed_deliveries": 1,
                     *             "redeliverable_deliveries": 1
                     *           }
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        instances: components["schemas"]["Instance"][];
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createInstance: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Sales line"
                 *     }
                 */
                "application/json": {
                    name?: string;
                };
            };
        };
        responses: {
            /** @description The new instance’s id */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a"
                     *     }
                     */
                    "application/json": {
                        instance_id: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - The body is not valid JSON.
             *     - A field breaks its rule (name at most 200 characters; engine_hmac_key 1 to 1024, or null).
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A manage key cannot create or delete instances: this needs the admin key.
             *     - A publish key cannot create or delete instances: this needs the admin key.
             *     - A portal link cannot create or delete instances: this needs the admin key.
             *     - A read-only portal link cannot create or delete instances: this needs the admin key.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Another instance has this name, and a source without an instance_id names its instances by name. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over this endpoint’s limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getInstance: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The instance, with its counts */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "instance": {
                     *         "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *         "name": "Sales line",
                     *         "status": "WORKING",
                     *         "phone": "15550001111",
                     *         "engine_hmac_key_set": true,
                     *         "engine_media_prefix": null,
                     *         "created_at": "2026-11-21T09:58:12.345Z",
                     *         "counts": {
                     *           "webhooks": 2,
                     *           "failed_deliveries": 1,
                     *           "redeliverable_deliveries": 1
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["InstanceResponse"];
                };
            };
            /** @description An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An instance key or portal link of another instance. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteInstance: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted, with its webhooks, keys, deliveries and media */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true
                     *     }
                     */
                    "application/json": components["schemas"]["Success"];
                };
            };
            /** @description An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A manage key cannot create or delete instances: this needs the admin key.
             *     - A publish key cannot create or delete instances: this needs the admin key.
             *     - A portal link cannot create or delete instances: this needs the admin key.
             *     - A read-only portal link cannot create or delete instances: this needs the admin key.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateInstance: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Sales line",
                 *       "engine_hmac_key": "waha-hmac-2f9c41d7"
                 *     }
                 */
                "application/json": {
                    /** @description the key the engine signs its webhook with (WAHA's hmac.key); null removes it. Write-only, sealed at rest */
                    engine_hmac_key?: string | null;
                    /** @description where this instance’s engine media may be downloaded from, within ENGINE_MEDIA_PREFIXES (e.g. http://waha:3000/api/files/<session>/); null: any of them */
                    engine_media_prefix?: string | null;
                    name?: string;
                };
            };
        };
        responses: {
            /** @description The instance as changed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "instance": {
                     *         "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *         "name": "Sales line",
                     *         "status": "WORKING",
                     *         "phone": "15550001111",
                     *         "engine_hmac_key_set": true,
                     *         "engine_media_prefix": null,
                     *         "created_at": "2026-11-21T09:58:12.345Z",
                     *         "counts": {
                     *           "webhooks": 2,
                     *           "failed_deliveries": 1,
                     *           "redeliverable_deliveries": 1
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["InstanceResponse"];
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - A field breaks its rule (name at most 200 characters; engine_hmac_key 1 to 1024, or null).
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot change the instance: it may only publish events and read its instance.
             *     - A portal link cannot change the instance: it manages its instance's webhooks and reads its delivery log.
             *     - A read-only portal link cannot change the instance: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             *     - A manage key sets a field only the admin key may change (engine_hmac_key, engine_media_prefix).
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Another instance has this name, and a source without an instance_id names its instances by name. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over this endpoint’s limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listDeliveries: {
        parameters: {
            query?: {
                /** @description one chat's deliveries (with status=pending: its queue) */
                chat?: string;
                /** @description the next_cursor of a previous page */
                cursor?: string;
                event?: string;
                /** @description evt_ followed by 1 to 100 letters, digits, _ or -; the event id */
                event_id?: string;
                /** @description an integer from 1 to 200; default 50 */
                limit?: string;
                /** @description deliveries created at or after */
                since?: string;
                status?: "pending" | "delivered" | "failed";
                /** @description deliveries created before */
                until?: string;
                /** @description whk_ followed by 1 to 100 letters, digits, _ or -; the webhook id */
                webhook_id?: string;
            };
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deliveries, newest first */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "deliveries": [
                     *         {
                     *           "delivery_id": "dlv_01jd5q7h3a8b2c4d6e8f0g2h4j",
                     *           "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *           "event": "message",
                     *           "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
                     *           "status": "delivered",
                     *           "attempt_count": 2,
                     *           "created_at": "2026-11-21T10:00:00.000Z",
                     *           "last_attempt_at": "2026-11-21T10:00:05.120Z",
                     *           "next_attempt_at": null,
                     *           "last_status_code": 200,
                     *           "last_error": null,
                     *           "failure_reason": null,
                     *           "chat": "14155550123@c.us",
                     *           "waiting_for": null
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": {
                        deliveries: components["schemas"]["Delivery"][];
                        /** @description pass it as cursor for the next page; null on the last */
                        next_cursor: string | null;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - A filter is out of form: an unknown status or event kind, a bad time, limit or cursor.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot read the delivery log: it may only publish events and read its instance.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description dlv_ followed by 1 to 100 letters, digits, _ or -; the delivery id */
                delivery_id: string;
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The delivery, the exact body sent and every attempt */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "delivery": {
                     *         "delivery_id": "dlv_01jd5q7h3a8b2c4d6e8f0g2h4j",
                     *         "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *         "event": "message",
                     *         "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
                     *         "status": "delivered",
                     *         "attempt_count": 2,
                     *         "created_at": "2026-11-21T10:00:00.000Z",
                     *         "last_attempt_at": "2026-11-21T10:00:05.120Z",
                     *         "next_attempt_at": null,
                     *         "last_status_code": 200,
                     *         "last_error": null,
                     *         "failure_reason": null,
                     *         "chat": "14155550123@c.us",
                     *         "waiting_for": null,
                     *         "media_failure": null,
                     *         "request_body": "{\"event_id\":\"evt_01jd5q7h2k9x4m8n3p6r0t1v2w\",\"event\":\"message\",\"instance_id\":\"ins_01jd5q7h2k9x4m8n3p6r0t1v2a\",\"timestamp\":1795341600000,\"payload\":{\"id\":\"false_15557654321@c.us_3EB0C767D26A1D8F4A2B\",\"from\":\"15557654321@c.us\",\"from_phone\":\"15557654321\",\"fromMe\":false,\"body\":\"Hi! Is my order on its way?\",\"hasMedia\":false}}",
                     *         "attempts": [
                     *           {
                     *             "attempt": 1,
                     *             "trigger": "scheduled",
                     *             "started_at": "2026-11-21T10:00:00.012Z",
                     *             "duration_ms": 8001,
                     *             "status_code": null,
                     *             "error": "timeout",
                     *             "response_body": null,
                     *             "next_attempt_at": "2026-11-21T10:00:13.013Z",
                     *             "next_attempt_reason": "schedule",
                     *             "note": null
                     *           },
                     *           {
                     *             "attempt": 2,
                     *             "trigger": "scheduled",
                     *             "started_at": "2026-11-21T10:00:13.020Z",
                     *             "duration_ms": 41,
                     *             "status_code": 200,
                     *             "error": null,
                     *             "response_body": "ok",
                     *             "next_attempt_at": null,
                     *             "next_attempt_reason": null,
                     *             "note": null
                     *           }
                     *         ]
                     *       }
                     *     }
                     */
                    "application/json": {
                        delivery: components["schemas"]["DeliveryDetail"];
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot read the delivery log: it may only publish events and read its instance.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The instance does not exist.
             *     - The delivery does not exist on this instance.
             */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    redeliverDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description dlv_ followed by 1 to 100 letters, digits, _ or -; the delivery id */
                delivery_id: string;
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Pending again, with a fresh set of attempts; the body is sent unchanged */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "delivery": {
                     *         "delivery_id": "dlv_01jd5q7h3a8b2c4d6e8f0g2h4j",
                     *         "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *         "event": "message",
                     *         "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
                     *         "status": "delivered",
                     *         "attempt_count": 2,
                     *         "created_at": "2026-11-21T10:00:00.000Z",
                     *         "last_attempt_at": "2026-11-21T10:00:05.120Z",
                     *         "next_attempt_at": null,
                     *         "last_status_code": 200,
                     *         "last_error": null,
                     *         "failure_reason": null,
                     *         "chat": "14155550123@c.us",
                     *         "waiting_for": null
                     *       },
                     *       "warnings": [
                     *         "string"
                     *       ]
                     *     }
                     */
                    "application/json": {
                        delivery: components["schemas"]["Delivery"];
                        /** @enum {boolean} */
                        success: true;
                        /** @description e.g. that the media link has expired */
                        warnings: string[];
                    };
                };
            };
            /** @description An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot redeliver: it may only publish events and read its instance.
             *     - A read-only portal link cannot redeliver: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The instance does not exist.
             *     - The delivery does not exist on this instance.
             */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The delivery has not failed, or its webhook is disabled. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    redeliverFailedDeliveries: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "since": "2026-11-21T00:00:00Z",
                 *       "until": "2026-11-22T00:00:00Z"
                 *     }
                 */
                "application/json": {
                    /**
                     * Format: date-time
                     * @description deliveries created at or after
                     */
                    since?: string;
                    /**
                     * Format: date-time
                     * @description deliveries created before
                     */
                    until?: string;
                    /** @description whk_ followed by 1 to 100 letters, digits, _ or -; the webhook id */
                    webhook_id?: string;
                };
            };
        };
        responses: {
            /** @description How many failed deliveries are pending again */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "redelivered": 1
                     *     }
                     */
                    "application/json": {
                        redelivered: number;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - A field is out of form: webhook_id, since or until.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot redeliver: it may only publish events and read its instance.
             *     - A read-only portal link cannot redeliver: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The instance does not exist.
             *     - The webhook does not exist on this instance.
             */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The webhook named by webhook_id is disabled. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over this endpoint’s limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    receiveEvolutionEvent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        /** @description Evolution API's webhook body, as Evolution sends it */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "event": "messages.upsert",
                 *       "instance": "sales",
                 *       "data": {
                 *         "key": {
                 *           "remoteJid": "5511988887777@s.whatsapp.net",
                 *           "fromMe": false,
                 *           "id": "3EB0C767D26A1D8F4A2B"
                 *         },
                 *         "pushName": "Ana",
                 *         "message": {
                 *           "conversation": "Oi! Meu pedido já saiu?"
                 *         },
                 *         "messageType": "conversation",
                 *         "messageTimestamp": 1795341600
                 *       },
                 *       "destination": "https://herald.example.com/instances/ins_01jd5q7kq4r8s2t6v0w4x8y2z6/engine/evolution",
                 *       "date_time": "2026-11-20T09:00:00.123Z",
                 *       "sender": "5511955554444@s.whatsapp.net",
                 *       "server_url": "https://evolution.example.com",
                 *       "apikey": null
                 *     }
                 */
                "application/json": {
                    /** @description Evolution’s own credential: never delivered */
                    apikey?: unknown;
                    /** @description the event’s data, turned into the delivery format; delivered as the payload’s _evolution */
                    data?: unknown;
                    /** @description orders the session.status events of an instance; not delivered */
                    date_time?: unknown;
                    /** @description not delivered */
                    destination?: unknown;
                    /** @description Evolution’s event, e.g. messages.upsert: it decides the Herald kind (message and message.any, message.ack, session.status…); an event Herald has no kind for keeps its name and goes only to webhooks subscribed to * */
                    event?: unknown;
                    /** @description not delivered */
                    instance?: unknown;
                    /** @description the session’s own id: the `to` of messages it gets, the `from` of those it sends */
                    sender?: unknown;
                    /** @description not delivered */
                    server_url?: unknown;
                } & {
                    [key: string]: unknown;
                };
            };
        };
        responses: {
            /** @description Stored with their deliveries; Evolution posting the same body again gets the same answer. event_id and deliveries are the first event’s. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "deliveries": 1,
                     *       "duplicate": true,
                     *       "events": [
                     *         {
                     *           "event": "message",
                     *           "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *           "deliveries": 1,
                     *           "duplicate": true
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        /** @description deliveries queued: one per subscribed, enabled webhook */
                        deliveries: number;
                        /**
                         * @description Evolution reported this again within ENGINE_DEDUPE_S; not stored
                         * @enum {boolean}
                         */
                        duplicate?: true;
                        /** @description derived from the instance and what the event reports */
                        event_id: string;
                        /** @description every event the body made, in order (a message before its message.any); the first is the answer’s */
                        events: {
                            /** @description deliveries queued: one per subscribed, enabled webhook */
                            deliveries: number;
                            /**
                             * @description Evolution reported this again within ENGINE_DEDUPE_S; not stored
                             * @enum {boolean}
                             */
                            duplicate?: true;
                            /** @description the Herald kind */
                            event: string;
                            /** @description derived from the instance and what the event reports */
                            event_id: string;
                        }[];
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - The body is not an Evolution API event body (no event, no data), or an event Herald maps lacks what it reads (a message without key.id or key.fromMe, an ack without keyId).
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             *     - A bearer JWT (Evolution API’s jwt_key) is not HS256, not signed with the instance’s engine HMAC key, or has expired; or the instance has no engine HMAC key.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A portal link cannot publish events: it manages its instance's webhooks and reads its delivery log.
             *     - A read-only portal link cannot publish events: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The body is over this endpoint’s limit.
             *     - The engine’s body is larger than ENGINE_MAX_BODY_BYTES (4 MiB by default); logged with its kind and id, and counted.
             */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key published more often per second than RATE_LIMIT_INGEST allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    receiveEvolutionEventByPath: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Evolution’s event in its url form, e.g. messages-upsert; not read */
                event: string;
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        /** @description Evolution API's webhook body, as Evolution sends it */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "event": "messages.upsert",
                 *       "instance": "sales",
                 *       "data": {
                 *         "key": {
                 *           "remoteJid": "5511988887777@s.whatsapp.net",
                 *           "fromMe": false,
                 *           "id": "3EB0C767D26A1D8F4A2B"
                 *         },
                 *         "pushName": "Ana",
                 *         "message": {
                 *           "conversation": "Oi! Meu pedido já saiu?"
                 *         },
                 *         "messageType": "conversation",
                 *         "messageTimestamp": 1795341600
                 *       },
                 *       "destination": "https://herald.example.com/instances/ins_01jd5q7kq4r8s2t6v0w4x8y2z6/engine/evolution",
                 *       "date_time": "2026-11-20T09:00:00.123Z",
                 *       "sender": "5511955554444@s.whatsapp.net",
                 *       "server_url": "https://evolution.example.com",
                 *       "apikey": null
                 *     }
                 */
                "application/json": {
                    /** @description Evolution’s own credential: never delivered */
                    apikey?: unknown;
                    /** @description the event’s data, turned into the delivery format; delivered as the payload’s _evolution */
                    data?: unknown;
                    /** @description orders the session.status events of an instance; not delivered */
                    date_time?: unknown;
                    /** @description not delivered */
                    destination?: unknown;
                    /** @description Evolution’s event, e.g. messages.upsert: it decides the Herald kind (message and message.any, message.ack, session.status…); an event Herald has no kind for keeps its name and goes only to webhooks subscribed to * */
                    event?: unknown;
                    /** @description not delivered */
                    instance?: unknown;
                    /** @description the session’s own id: the `to` of messages it gets, the `from` of those it sends */
                    sender?: unknown;
                    /** @description not delivered */
                    server_url?: unknown;
                } & {
                    [key: string]: unknown;
                };
            };
        };
        responses: {
            /** @description Stored with their deliveries; Evolution posting the same body again gets the same answer. event_id and deliveries are the first event’s. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "deliveries": 1,
                     *       "duplicate": true,
                     *       "events": [
                     *         {
                     *           "event": "message",
                     *           "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *           "deliveries": 1,
                     *           "duplicate": true
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        /** @description deliveries queued: one per subscribed, enabled webhook */
                        deliveries: number;
                        /**
                         * @description Evolution reported this again within ENGINE_DEDUPE_S; not stored
                         * @enum {boolean}
                         */
                        duplicate?: true;
                        /** @description derived from the instance and what the event reports */
                        event_id: string;
                        /** @description every event the body made, in order (a message before its message.any); the first is the answer’s */
                        events: {
                            /** @description deliveries queued: one per subscribed, enabled webhook */
                            deliveries: number;
                            /**
                             * @description Evolution reported this again within ENGINE_DEDUPE_S; not stored
                             * @enum {boolean}
                             */
                            duplicate?: true;
                            /** @description the Herald kind */
                            event: string;
                            /** @description derived from the instance and what the event reports */
                            event_id: string;
                        }[];
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - The body is not an Evolution API event body (no event, no data), or an event Herald maps lacks what it reads (a message without key.id or key.fromMe, an ack without keyId).
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             *     - A bearer JWT (Evolution API’s jwt_key) is not HS256, not signed with the instance’s engine HMAC key, or has expired; or the instance has no engine HMAC key.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A portal link cannot publish events: it manages its instance's webhooks and reads its delivery log.
             *     - A read-only portal link cannot publish events: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The body is over this endpoint’s limit.
             *     - The engine’s body is larger than ENGINE_MAX_BODY_BYTES (4 MiB by default); logged with its kind and id, and counted.
             */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key published more often per second than RATE_LIMIT_INGEST allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    receiveWahaEvent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        /** @description WAHA's webhook body, as WAHA sends it */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "id": "evt_01jd5q7kq4r8s2t6v0w4x8y2z6",
                 *       "timestamp": 1795341600000,
                 *       "session": "default",
                 *       "engine": "WEBJS",
                 *       "event": "message",
                 *       "payload": {
                 *         "id": "false_15557654321@c.us_3EB0C767D26A1D8F4A2B",
                 *         "from": "15557654321@c.us",
                 *         "fromMe": false,
                 *         "body": "Hi! Is my order on its way?",
                 *         "hasMedia": false
                 *       },
                 *       "me": {
                 *         "id": "15550001111@c.us",
                 *         "pushName": "Sales line"
                 *       }
                 *     }
                 */
                "application/json": {
                    /** @description not delivered */
                    engine?: unknown;
                    /** @description not delivered */
                    environment?: unknown;
                    /** @description the event kind, e.g. message; a kind outside the catalog goes only to webhooks subscribed to * */
                    event?: unknown;
                    /** @description the event id (evt_…): the event_id is derived from it and the instance (evt_ + 26 characters of SHA-256 over both), so WAHA retrying the event stores it once, and the same event sent to two instances is one event at each. Without an id, X-Webhook-Request-Id plays its part. */
                    id?: unknown;
                    /** @description the session's own account { id, pushName }: its phone fills a session.status without one */
                    me?: unknown;
                    /** @description not delivered */
                    metadata?: unknown;
                    /** @description the event payload, turned into the delivery format */
                    payload?: unknown;
                    /** @description not delivered */
                    session?: unknown;
                    /** @description milliseconds since the epoch; the event timestamp */
                    timestamp?: unknown;
                } & {
                    [key: string]: unknown;
                };
            };
        };
        responses: {
            /** @description Stored with its deliveries; WAHA retrying the same id gets the same answer. A repeat of a message the engine reported within ENGINE_DEDUPE_S is answered with deliveries 0 and duplicate: true, and not stored. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "deliveries": 1,
                     *       "duplicate": true
                     *     }
                     */
                    "application/json": components["schemas"]["EventAccepted"];
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - The body is not a WAHA webhook body (no event, no payload, an id or timestamp out of form).
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             *     - The instance has an engine HMAC key and X-Webhook-Hmac is missing or does not match the body.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A portal link cannot publish events: it manages its instance's webhooks and reads its delivery log.
             *     - A read-only portal link cannot publish events: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The body is over this endpoint’s limit.
             *     - The engine’s body is larger than ENGINE_MAX_BODY_BYTES (4 MiB by default); logged with its kind and id, and counted.
             */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key published more often per second than RATE_LIMIT_INGEST allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    publishEvent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "event": "message",
                 *       "payload": {
                 *         "id": "false_15557654321@c.us_3EB0C767D26A1D8F4A2B",
                 *         "timestamp": 1763719200,
                 *         "from": "15557654321@c.us",
                 *         "fromMe": false,
                 *         "source": "app",
                 *         "to": "15550001111@c.us",
                 *         "participant": null,
                 *         "body": "Hi! Is my order on its way?",
                 *         "hasMedia": false,
                 *         "ack": null,
                 *         "ackName": "UNKNOWN",
                 *         "replyTo": null,
                 *         "_data": {},
                 *         "from_phone": "15557654321"
                 *       },
                 *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                 *       "timestamp": 1795341600000
                 *     }
                 */
                "application/json": {
                    /** @description event kind from the catalog */
                    event: string;
                    /** @description evt_ followed by 1 to 100 letters, digits, _ or -; the idempotency key */
                    event_id?: string;
                    payload: {
                        [key: string]: unknown;
                    };
                    /** @description milliseconds since the epoch; default now */
                    timestamp?: number;
                };
            };
        };
        responses: {
            /** @description Stored with its deliveries; the same event_id again gets the same answer */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "deliveries": 1,
                     *       "duplicate": true
                     *     }
                     */
                    "application/json": components["schemas"]["EventAccepted"];
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - The event kind is unknown or its payload lacks a field the kind requires.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A portal link cannot publish events: it manages its instance's webhooks and reads its delivery log.
             *     - A read-only portal link cannot publish events: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The event_id was already published to another instance (nothing is stored). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The body is over this endpoint’s limit.
             *     - The event’s delivery body would be larger than 256 KiB.
             */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key published more often per second than RATE_LIMIT_INGEST allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    publishEventBatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "events": [
                 *         {
                 *           "event": "message",
                 *           "payload": {
                 *             "id": "false_15557654321@c.us_3EB0C767D26A1D8F4A2B",
                 *             "timestamp": 1763719200,
                 *             "from": "15557654321@c.us",
                 *             "fromMe": false,
                 *             "source": "app",
                 *             "to": "15550001111@c.us",
                 *             "participant": null,
                 *             "body": "Hi! Is my order on its way?",
                 *             "hasMedia": false,
                 *             "ack": null,
                 *             "ackName": "UNKNOWN",
                 *             "replyTo": null,
                 *             "_data": {},
                 *             "from_phone": "15557654321"
                 *           },
                 *           "timestamp": 1795341600000
                 *         },
                 *         {
                 *           "event": "session.status",
                 *           "payload": {
                 *             "status": "WORKING",
                 *             "statuses": [
                 *               {
                 *                 "status": "STOPPED",
                 *                 "timestamp": 1763719000000
                 *               },
                 *               {
                 *                 "status": "STARTING",
                 *                 "timestamp": 1763719001000
                 *               },
                 *               {
                 *                 "status": "WORKING",
                 *                 "timestamp": 1763719003000
                 *               }
                 *             ],
                 *             "data": null,
                 *             "phone": "15550001111"
                 *           },
                 *           "timestamp": 1795341601000
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    events: {
                        /** @description event kind from the catalog */
                        event: string;
                        /** @description evt_ followed by 1 to 100 letters, digits, _ or -; the idempotency key */
                        event_id?: string;
                        payload: {
                            [key: string]: unknown;
                        };
                        /** @description milliseconds since the epoch; default now */
                        timestamp?: number;
                    }[];
                };
            };
        };
        responses: {
            /** @description Every event stored with its deliveries, in the order sent */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "results": [
                     *         {
                     *           "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *           "deliveries": 1
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        results: {
                            deliveries: number;
                            event_id: string;
                        }[];
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - An event of the batch is invalid: the field names which one (nothing is stored).
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A portal link cannot publish events: it manages its instance's webhooks and reads its delivery log.
             *     - A read-only portal link cannot publish events: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The event_id was already published to another instance (nothing is stored). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The body is over this endpoint’s limit.
             *     - An event’s delivery body would be larger than 256 KiB: the field names which (nothing is stored).
             */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key published more often per second than RATE_LIMIT_INGEST allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listInstanceKeys: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The instance’s keys, without their secret part */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "keys": [
                     *         {
                     *           "key_id": "key_01jd5q7h2x4y6z8a0b2c4d6e8f",
                     *           "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *           "scope": "manage",
                     *           "created_at": "string"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        keys: {
                            created_at: string;
                            instance_id: string;
                            key_id: string;
                            /** @description manage (default): its instance’s webhooks, deliveries, events and portal links; publish: events alone (…/events, …/events/batch, …/engine/…, media upload), for the engine */
                            scope: "manage" | "publish";
                        }[];
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A manage key cannot manage instance keys: this needs the admin key.
             *     - A publish key cannot manage instance keys: this needs the admin key.
             *     - A portal link cannot manage instance keys: this needs the admin key.
             *     - A read-only portal link cannot manage instance keys: this needs the admin key.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createInstanceKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "scope": "publish"
                 *     }
                 */
                "application/json": {
                    /** @description manage (default): its instance’s webhooks, deliveries, events and portal links; publish: events alone (…/events, …/events/batch, …/engine/…, media upload), for the engine */
                    scope?: "manage" | "publish";
                };
            };
        };
        responses: {
            /** @description The new key */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "key_id": "key_01jd5q7h2x4y6z8a0b2c4d6e8f",
                     *       "key": "hk_9Qm4c2Wv7bXn1LpZ8rT5yU3sK0dF6gH2jA4eV7wQ1cE",
                     *       "scope": "manage"
                     *     }
                     */
                    "application/json": {
                        /** @description shown this once; only its hash is kept */
                        key: string;
                        key_id: string;
                        /** @description manage (default): its instance’s webhooks, deliveries, events and portal links; publish: events alone (…/events, …/events/batch, …/engine/…, media upload), for the engine */
                        scope: "manage" | "publish";
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - Scope is neither manage nor publish, or the body has another field.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A manage key cannot manage instance keys: this needs the admin key.
             *     - A publish key cannot manage instance keys: this needs the admin key.
             *     - A portal link cannot manage instance keys: this needs the admin key.
             *     - A read-only portal link cannot manage instance keys: this needs the admin key.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over this endpoint’s limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    revokeInstanceKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
                /** @description key_ followed by 1 to 100 letters, digits, _ or -; the key id */
                key_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked: the key is refused (401) from now on */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true
                     *     }
                     */
                    "application/json": components["schemas"]["Success"];
                };
            };
            /** @description An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A manage key cannot manage instance keys: this needs the admin key.
             *     - A publish key cannot manage instance keys: this needs the admin key.
             *     - A portal link cannot manage instance keys: this needs the admin key.
             *     - A read-only portal link cannot manage instance keys: this needs the admin key.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The instance does not exist.
             *     - The key does not exist on this instance (or was revoked).
             */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    uploadMedia: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        /** @description The file itself, its bytes as they are, at most MEDIA_MAX_BYTES (64 MiB by default). Content-Type is its media type, e.g. image/jpeg or audio/ogg; codecs=opus (application/octet-stream when absent). */
        requestBody: {
            content: {
                "*/*": string;
            };
        };
        responses: {
            /** @description Stored; refer to media_id in an event’s payload.media */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "media_id": "med_01jd5q7h3m5n7p9q1r3s5t7v9w",
                     *       "mimetype": "image/jpeg",
                     *       "size": 1,
                     *       "sha256": "9f2c1e7d4b8a6f3e0c5d2b9a7e4f1c8d6b3a0e7f4c1d8b5a2e9f6c3d0b7a4e1f"
                     *     }
                     */
                    "application/json": {
                        media_id: string;
                        mimetype: string;
                        /** @description lowercase hex SHA-256 of the bytes */
                        sha256: string;
                        size: number;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - Content-Type is not a media type.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A portal link cannot publish events: it manages its instance's webhooks and reads its delivery log.
             *     - A read-only portal link cannot publish events: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The file is larger than MEDIA_MAX_BYTES (the connection closes). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listPortalLinks: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The live links, without tokens */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "links": [
                     *         {
                     *           "link_id": "string",
                     *           "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *           "read_only": true,
                     *           "expires_at": "2026-11-21T10:00:00.000Z",
                     *           "created_at": "2026-11-21T10:00:00.000Z"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        links: {
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            expires_at: string;
                            instance_id: string;
                            link_id: string;
                            read_only: boolean;
                        }[];
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot manage portal links: it may only publish events and read its instance.
             *     - A portal link cannot manage portal links: it manages its instance's webhooks and reads its delivery log.
             *     - A read-only portal link cannot manage portal links: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createPortalLink: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "ttl_s": 3600,
                 *       "read_only": false
                 *     }
                 */
                "application/json": {
                    /** @description reads only: every write is a 403 (default false) */
                    read_only?: boolean;
                    /** @description seconds the link works (default 3600) */
                    ttl_s?: number;
                };
            };
        };
        responses: {
            /** @description The new link */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "link_id": "string",
                     *       "url": "https://hooks.example.com/media/med_01jd5q7h3m5n7p9q1r3s5t7v9w?expires=1795341600&sig=…",
                     *       "expires_at": "2026-11-21T10:00:00.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        expires_at: string;
                        link_id: string;
                        /** @enum {boolean} */
                        success: true;
                        /** @description the portal; its token is in the fragment, shown this once */
                        url: string;
                    };
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - A field breaks its rule: ttl_s 60 to 86400, read_only true or false.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot manage portal links: it may only publish events and read its instance.
             *     - A portal link cannot manage portal links: it manages its instance's webhooks and reads its delivery log.
             *     - A read-only portal link cannot manage portal links: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance already has PORTAL_MAX_LINKS live portal links. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over this endpoint’s limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    revokePortalLink: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
                /** @description lnk_ followed by 1 to 100 letters, digits, _ or -; the portal link id */
                link_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked: the link is refused (401) from now on */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true
                     *     }
                     */
                    "application/json": components["schemas"]["Success"];
                };
            };
            /** @description An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot manage portal links: it may only publish events and read its instance.
             *     - A portal link cannot manage portal links: it manages its instance's webhooks and reads its delivery log.
             *     - A read-only portal link cannot manage portal links: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The instance does not exist.
             *     - The portal link does not exist on this instance (or was revoked).
             */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The instance’s webhooks, with their health */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "webhooks": [
                     *         {
                     *           "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
                     *           "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *           "destination_url": "https://hooks.example.com/herald",
                     *           "events": [
                     *             "message",
                     *             "message.ack",
                     *             "session.status"
                     *           ],
                     *           "ignore_status": true,
                     *           "enabled": true,
                     *           "client_sign_secret_set": true,
                     *           "previous_secret_until": null,
                     *           "filter": {
                     *             "payload.fromMe": false
                     *           },
                     *           "headers": {
                     *             "Authorization": "****"
                     *           },
                     *           "rate_limit": {
                     *             "per_second": 20
                     *           },
                     *           "standard_webhooks": false,
                     *           "ordering": "chat",
                     *           "health": {
                     *             "last_delivered_at": "2026-11-21T10:02:11.000Z",
                     *             "last_failed_at": "2026-11-21T08:40:02.000Z",
                     *             "consecutive_failures": 0,
                     *             "attempts_24h": 1290,
                     *             "delivered_24h": 1286,
                     *             "failed_24h": 1,
                     *             "retried_24h": 3
                     *           },
                     *           "disabled_reason": null,
                     *           "disabled_at": null,
                     *           "created_at": "2026-11-21T09:59:01.000Z",
                     *           "updated_at": "2026-11-21T09:59:30.000Z"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        /** @enum {boolean} */
                        success: true;
                        webhooks: components["schemas"]["Webhook"][];
                    };
                };
            };
            /** @description An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot read webhooks: it may only publish events and read its instance.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "destination_url": "https://hooks.example.com/herald",
                 *       "events": [
                 *         "message",
                 *         "message.ack",
                 *         "session.status"
                 *       ],
                 *       "client_sign_secret": "whsec_3b8f0c2a9d4e6f1b7c5a8e2d0f9b4c6a",
                 *       "ignore_status": true,
                 *       "filter": {
                 *         "payload.fromMe": false
                 *       },
                 *       "headers": {
                 *         "Authorization": "Bearer rcv_live_5f2c"
                 *       },
                 *       "rate_limit": {
                 *         "per_second": 20
                 *       },
                 *       "standard_webhooks": false,
                 *       "ordering": "chat"
                 *     }
                 */
                "application/json": {
                    /** @description PATCH only: remove the stored secret */
                    clear_client_sign?: boolean;
                    client_sign_secret?: string;
                    /** @description absolute http(s) URL, or a broker: amqp(s)://user:pass@host/vhost?exchange=E&routing_key=K (RabbitMQ), nats://user:pass@host/subject or tls:// (NATS JetStream), redis(s)://:pass@host/db?stream=S&maxlen=N (Redis Streams); at most 2048 characters. A password is shown as **** */
                    destination_url: string;
                    /** @description refused: use POST …/enabled */
                    enabled?: boolean;
                    /** @description event kinds, or ["*"] for all */
                    events: string[];
                    /**
                     * @description which events of its kinds it receives: dotted paths of the delivery body to a value, or to one of $eq, $ne, $in, $nin, $exists, $prefix; $and / $or take lists of such objects; at most 4 KiB
                     * @example {
                     *       "payload.fromMe": false,
                     *       "payload.from": {
                     *         "$prefix": "49"
                     *       }
                     *     }
                     */
                    filter?: {
                        [key: string]: unknown;
                    } | null;
                    /**
                     * @description its own headers, sent with every attempt: at most 20, values at most 1 KiB of Latin-1 text without control characters; Expect, Upgrade, Keep-Alive, TE, Trailer and Proxy-* are refused. Values are write-only: shown as ****, and **** given back keeps the saved value of that header
                     * @example {
                     *       "Authorization": "Bearer rcv_…"
                     *     }
                     */
                    headers?: {
                        [key: string]: unknown;
                    } | null;
                    /** @description Skip stories: true (the default) delivers no message from status@broadcast (WhatsApp "status" posts); false delivers them with the message events. Not about session.status, which is delivered whenever subscribed. */
                    ignore_status?: boolean;
                    /** @description "chat": one delivery of a chat in flight at a time, in the order its events were accepted (the next waits until the one before is delivered or failed); "none" (the default): each delivery on its own */
                    ordering?: "none" | "chat";
                    rate_limit?: {
                        /** @description deliveries started per second at most */
                        per_second: number;
                    } | null;
                    /** @description Standard Webhooks' headers too (webhook-id, webhook-timestamp, webhook-signature); the secret must then be whsec_ and the base64 of 24 to 64 bytes */
                    standard_webhooks?: boolean;
                };
            };
        };
        responses: {
            /** @description The new webhook’s id; it starts disabled */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f"
                     *     }
                     */
                    "application/json": {
                        /** @enum {boolean} */
                        success: true;
                        webhook_id: string;
                    };
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - A field breaks its rule: the message names the field and the rule, details lists every one.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot change webhooks: it may only publish events and read its instance.
             *     - A read-only portal link cannot change webhooks: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance does not exist. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The instance already has MAX_WEBHOOKS_PER_INSTANCE webhooks. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over this endpoint’s limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The destination_url host is not globally reachable (a private, loopback or link-local address, localhost). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
                /** @description whk_ followed by 1 to 100 letters, digits, _ or -; the webhook id */
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The webhook, with its health */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "webhook": {
                     *         "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
                     *         "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *         "destination_url": "https://hooks.example.com/herald",
                     *         "events": [
                     *           "message",
                     *           "message.ack",
                     *           "session.status"
                     *         ],
                     *         "ignore_status": true,
                     *         "enabled": true,
                     *         "client_sign_secret_set": true,
                     *         "previous_secret_until": null,
                     *         "filter": {
                     *           "payload.fromMe": false
                     *         },
                     *         "headers": {
                     *           "Authorization": "****"
                     *         },
                     *         "rate_limit": {
                     *           "per_second": 20
                     *         },
                     *         "standard_webhooks": false,
                     *         "ordering": "chat",
                     *         "health": {
                     *           "last_delivered_at": "2026-11-21T10:02:11.000Z",
                     *           "last_failed_at": "2026-11-21T08:40:02.000Z",
                     *           "consecutive_failures": 0,
                     *           "attempts_24h": 1290,
                     *           "delivered_24h": 1286,
                     *           "failed_24h": 1,
                     *           "retried_24h": 3
                     *         },
                     *         "disabled_reason": null,
                     *         "disabled_at": null,
                     *         "created_at": "2026-11-21T09:59:01.000Z",
                     *         "updated_at": "2026-11-21T09:59:30.000Z"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["WebhookResponse"];
                };
            };
            /** @description An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot read webhooks: it may only publish events and read its instance.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The instance does not exist.
             *     - The webhook does not exist on this instance.
             */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
                /** @description whk_ followed by 1 to 100 letters, digits, _ or -; the webhook id */
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted: its pending deliveries are cancelled, its log removed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true
                     *     }
                     */
                    "application/json": components["schemas"]["Success"];
                };
            };
            /** @description An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot change webhooks: it may only publish events and read its instance.
             *     - A read-only portal link cannot change webhooks: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The instance does not exist.
             *     - The webhook does not exist on this instance.
             */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
                /** @description whk_ followed by 1 to 100 letters, digits, _ or -; the webhook id */
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "destination_url": "https://hooks.example.com/herald",
                 *       "events": [
                 *         "message",
                 *         "message.ack",
                 *         "session.status"
                 *       ],
                 *       "client_sign_secret": "whsec_3b8f0c2a9d4e6f1b7c5a8e2d0f9b4c6a",
                 *       "ignore_status": true,
                 *       "filter": {
                 *         "payload.fromMe": false
                 *       },
                 *       "headers": {
                 *         "Authorization": "Bearer rcv_live_5f2c"
                 *       },
                 *       "rate_limit": {
                 *         "per_second": 20
                 *       },
                 *       "standard_webhooks": false,
                 *       "ordering": "chat"
                 *     }
                 */
                "application/json": {
                    /** @description PATCH only: remove the stored secret */
                    clear_client_sign?: boolean;
                    client_sign_secret?: string;
                    /** @description absolute http(s) URL, or a broker: amqp(s)://user:pass@host/vhost?exchange=E&routing_key=K (RabbitMQ), nats://user:pass@host/subject or tls:// (NATS JetStream), redis(s)://:pass@host/db?stream=S&maxlen=N (Redis Streams); at most 2048 characters. A password is shown as **** */
                    destination_url: string;
                    /** @description refused: use POST …/enabled */
                    enabled?: boolean;
                    /** @description event kinds, or ["*"] for all */
                    events: string[];
                    /**
                     * @description which events of its kinds it receives: dotted paths of the delivery body to a value, or to one of $eq, $ne, $in, $nin, $exists, $prefix; $and / $or take lists of such objects; at most 4 KiB
                     * @example {
                     *       "payload.fromMe": false,
                     *       "payload.from": {
                     *         "$prefix": "49"
                     *       }
                     *     }
                     */
                    filter?: {
                        [key: string]: unknown;
                    } | null;
                    /**
                     * @description its own headers, sent with every attempt: at most 20, values at most 1 KiB of Latin-1 text without control characters; Expect, Upgrade, Keep-Alive, TE, Trailer and Proxy-* are refused. Values are write-only: shown as ****, and **** given back keeps the saved value of that header
                     * @example {
                     *       "Authorization": "Bearer rcv_…"
                     *     }
                     */
                    headers?: {
                        [key: string]: unknown;
                    } | null;
                    /** @description Skip stories: true (the default) delivers no message from status@broadcast (WhatsApp "status" posts); false delivers them with the message events. Not about session.status, which is delivered whenever subscribed. */
                    ignore_status?: boolean;
                    /** @description "chat": one delivery of a chat in flight at a time, in the order its events were accepted (the next waits until the one before is delivered or failed); "none" (the default): each delivery on its own */
                    ordering?: "none" | "chat";
                    rate_limit?: {
                        /** @description deliveries started per second at most */
                        per_second: number;
                    } | null;
                    /** @description Standard Webhooks' headers too (webhook-id, webhook-timestamp, webhook-signature); the secret must then be whsec_ and the base64 of 24 to 64 bytes */
                    standard_webhooks?: boolean;
                };
            };
        };
        responses: {
            /** @description The webhook with its new configuration */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "webhook": {
                     *         "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
                     *         "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *         "destination_url": "https://hooks.example.com/herald",
                     *         "events": [
                     *           "message",
                     *           "message.ack",
                     *           "session.status"
                     *         ],
                     *         "ignore_status": true,
                     *         "enabled": true,
                     *         "client_sign_secret_set": true,
                     *         "previous_secret_until": null,
                     *         "filter": {
                     *           "payload.fromMe": false
                     *         },
                     *         "headers": {
                     *           "Authorization": "****"
                     *         },
                     *         "rate_limit": {
                     *           "per_second": 20
                     *         },
                     *         "standard_webhooks": false,
                     *         "ordering": "chat",
                     *         "health": {
                     *           "last_delivered_at": "2026-11-21T10:02:11.000Z",
                     *           "last_failed_at": "2026-11-21T08:40:02.000Z",
                     *           "consecutive_failures": 0,
                     *           "attempts_24h": 1290,
                     *           "delivered_24h": 1286,
                     *           "failed_24h": 1,
                     *           "retried_24h": 3
                     *         },
                     *         "disabled_reason": null,
                     *         "disabled_at": null,
                     *         "created_at": "2026-11-21T09:59:01.000Z",
                     *         "updated_at": "2026-11-21T09:59:30.000Z"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["WebhookResponse"];
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - A field breaks its rule: the message names the field and the rule, details lists every one.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot change webhooks: it may only publish events and read its instance.
             *     - A read-only portal link cannot change webhooks: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The instance does not exist.
             *     - The webhook does not exist on this instance.
             */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over this endpoint’s limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The destination_url host is not globally reachable (a private, loopback or link-local address, localhost). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    setWebhookEnabled: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
                /** @description whk_ followed by 1 to 100 letters, digits, _ or -; the webhook id */
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "enabled": true
                 *     }
                 */
                "application/json": {
                    enabled: boolean;
                };
            };
        };
        responses: {
            /** @description The webhook, enabled or disabled */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "webhook": {
                     *         "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
                     *         "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *         "destination_url": "https://hooks.example.com/herald",
                     *         "events": [
                     *           "message",
                     *           "message.ack",
                     *           "session.status"
                     *         ],
                     *         "ignore_status": true,
                     *         "enabled": true,
                     *         "client_sign_secret_set": true,
                     *         "previous_secret_until": null,
                     *         "filter": {
                     *           "payload.fromMe": false
                     *         },
                     *         "headers": {
                     *           "Authorization": "****"
                     *         },
                     *         "rate_limit": {
                     *           "per_second": 20
                     *         },
                     *         "standard_webhooks": false,
                     *         "ordering": "chat",
                     *         "health": {
                     *           "last_delivered_at": "2026-11-21T10:02:11.000Z",
                     *           "last_failed_at": "2026-11-21T08:40:02.000Z",
                     *           "consecutive_failures": 0,
                     *           "attempts_24h": 1290,
                     *           "delivered_24h": 1286,
                     *           "failed_24h": 1,
                     *           "retried_24h": 3
                     *         },
                     *         "disabled_reason": null,
                     *         "disabled_at": null,
                     *         "created_at": "2026-11-21T09:59:01.000Z",
                     *         "updated_at": "2026-11-21T09:59:30.000Z"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["WebhookResponse"];
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - The body has no enabled, or one that is not true or false.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot change webhooks: it may only publish events and read its instance.
             *     - A read-only portal link cannot change webhooks: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The instance does not exist.
             *     - The webhook does not exist on this instance.
             */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over this endpoint’s limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    rotateWebhookSecret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
                /** @description whk_ followed by 1 to 100 letters, digits, _ or -; the webhook id */
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "grace_s": 3600
                 *     }
                 */
                "application/json": {
                    /** @description the new secret; one is generated when left out */
                    client_sign_secret?: string;
                    /** @description seconds the old secret is still signed with, beside the new one (default 86400) */
                    grace_s?: number;
                };
            };
        };
        responses: {
            /** @description The webhook and its new secret */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "webhook": {
                     *         "webhook_id": "whk_01jd5q7j0c3v8n2m5x7z9b4d6f",
                     *         "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *         "destination_url": "https://hooks.example.com/herald",
                     *         "events": [
                     *           "message",
                     *           "message.ack",
                     *           "session.status"
                     *         ],
                     *         "ignore_status": true,
                     *         "enabled": true,
                     *         "client_sign_secret_set": true,
                     *         "previous_secret_until": null,
                     *         "filter": {
                     *           "payload.fromMe": false
                     *         },
                     *         "headers": {
                     *           "Authorization": "****"
                     *         },
                     *         "rate_limit": {
                     *           "per_second": 20
                     *         },
                     *         "standard_webhooks": false,
                     *         "ordering": "chat",
                     *         "health": {
                     *           "last_delivered_at": "2026-11-21T10:02:11.000Z",
                     *           "last_failed_at": "2026-11-21T08:40:02.000Z",
                     *           "consecutive_failures": 0,
                     *           "attempts_24h": 1290,
                     *           "delivered_24h": 1286,
                     *           "failed_24h": 1,
                     *           "retried_24h": 3
                     *         },
                     *         "disabled_reason": null,
                     *         "disabled_at": null,
                     *         "created_at": "2026-11-21T09:59:01.000Z",
                     *         "updated_at": "2026-11-21T09:59:30.000Z"
                     *       },
                     *       "client_sign_secret": "whsec_3b8f0c2a9d4e6f1b7c5a8e2d0f9b4c6a"
                     *     }
                     */
                    "application/json": {
                        /** @description the new secret, shown this once */
                        client_sign_secret: string;
                        /** @enum {boolean} */
                        success: true;
                        webhook: components["schemas"]["Webhook"];
                    };
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - A field breaks its rule: grace_s 0 to 604800, client_sign_secret 1 to 1024 characters (on a webhook with standard_webhooks, whsec_ and the base64 of 24 to 64 bytes).
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot change webhooks: it may only publish events and read its instance.
             *     - A read-only portal link cannot change webhooks: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The instance does not exist.
             *     - The webhook does not exist on this instance.
             */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over this endpoint’s limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWebhookStats: {
        parameters: {
            query?: {
                /** @description an integer from 1 to 168; default 24 */
                hours?: string;
            };
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
                /** @description whk_ followed by 1 to 100 letters, digits, _ or -; the webhook id */
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One bucket per hour, oldest first, the last the present hour */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "buckets": [
                     *         {
                     *           "start": "2026-11-21T10:00:00.000Z",
                     *           "delivered": 41,
                     *           "failed": 1,
                     *           "retried_attempts": 3,
                     *           "p50_ms": 84,
                     *           "p95_ms": 310
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        buckets: {
                            /** @description deliveries whose last attempt ended in the hour, delivered */
                            delivered: number;
                            /** @description deliveries whose last attempt ended in the hour, failed */
                            failed: number;
                            /** @description milliseconds; null when no attempt of the hour was answered */
                            p50_ms: number | null;
                            /** @description milliseconds; null when no attempt of the hour was answered */
                            p95_ms: number | null;
                            /** @description attempts started in the hour that failed and were retried */
                            retried_attempts: number;
                            /**
                             * Format: date-time
                             * @description the hour’s start (UTC)
                             */
                            start: string;
                        }[];
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - Hours is not an integer from 1 to 168.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot read webhooks: it may only publish events and read its instance.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The instance does not exist.
             *     - The webhook does not exist on this instance.
             */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    sendTestEvent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ins_ followed by 1 to 100 letters, digits, _ or -; the instance id */
                instance_id: string;
                /** @description whk_ followed by 1 to 100 letters, digits, _ or -; the webhook id */
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "event": "message"
                 *     }
                 */
                "application/json": {
                    /** @description an event kind the webhook subscribes to: session.status, message, message.any, message.ack, message.reaction, message.edited, message.revoked, message.unknown, group.join, group.leave, group.update, group.participants, call.received, call.accepted, call.rejected, label.upsert, label.deleted, label.chat.added, label.chat.deleted, poll.vote, poll.vote.failed, presence.update, message.waiting, message.ack.group, group.v2.join, group.v2.leave, group.v2.update, group.v2.participants, chat.archive, event.response, event.response.failed, engine.event, webhook.disabled, webhook.failing, webhook.recovered, delivery.failed */
                    event: string;
                };
            };
        };
        responses: {
            /** @description The sample event is stored and its delivery queued; follow it in the delivery log */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "event_id": "evt_01jd5q7h2k9x4m8n3p6r0t1v2w",
                     *       "delivery_id": "dlv_01jd5q7h3a8b2c4d6e8f0g2h4j",
                     *       "event": "message"
                     *     }
                     */
                    "application/json": {
                        delivery_id: string;
                        event: string;
                        event_id: string;
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - An id in the path is not in its form (ins_…, whk_…, dlv_…, key_…).
             *     - The body is not valid JSON.
             *     - The event kind is unknown, or the webhook does not subscribe to it.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A publish key cannot change webhooks: it may only publish events and read its instance.
             *     - A read-only portal link cannot change webhooks: it is read-only and may only read.
             *     - An instance key or portal link of another instance.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The instance does not exist.
             *     - The webhook does not exist on this instance.
             */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The webhook is disabled. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over this endpoint’s limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    downloadMedia: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                media_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file, with its Content-Type, ETag and a Cache-Control that ends with the link */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            /** @description The part a Range asked for; Content-Range says which */
            206: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            /** @description Not modified: If-None-Match matched its ETag */
            304: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The link was altered, or its expires or sig is missing. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The file is no longer stored (its instance was deleted, or it was swept). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The link has expired. */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Range asks for bytes outside the file; Content-Range says its size. */
            416: {
                headers: {
                    /** @description bytes *\/<size> */
                    "Content-Range"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metrics, one sample per line */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A manage key cannot read /metrics: this needs the admin key.
             *     - A publish key cannot read /metrics: this needs the admin key.
             *     - A portal link cannot read /metrics: this needs the admin key.
             *     - A read-only portal link cannot read /metrics: this needs the admin key.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPortalLink: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The link whose token made this call */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "link": {
                     *         "link_id": "string",
                     *         "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *         "read_only": true,
                     *         "expires_at": "2026-11-21T10:00:00.000Z",
                     *         "created_at": "2026-11-21T10:00:00.000Z"
                     *       }
                     *     }
                     */
                    "application/json": {
                        link: {
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            expires_at: string;
                            instance_id: string;
                            link_id: string;
                            read_only: boolean;
                        };
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - The admin key cannot read a portal link's own facts: call it with a portal link's token.
             *     - A manage key cannot read a portal link's own facts: call it with a portal link's token.
             *     - A publish key cannot read a portal link's own facts: call it with a portal link's token.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    checkReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The database answers: this process can serve */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "status": "ready"
                     *     }
                     */
                    "application/json": {
                        /** @enum {string} */
                        status: "ready";
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listSources: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every source, oldest first */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "sources": [
                     *         {
                     *           "source_id": "string",
                     *           "url": "https://hooks.example.com/media/med_01jd5q7h3m5n7p9q1r3s5t7v9w?expires=1795341600&sig=…",
                     *           "format": "string",
                     *           "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *           "state": "string",
                     *           "last_error": "string",
                     *           "received": 1,
                     *           "ingested": 1,
                     *           "duplicates": 1,
                     *           "parked": 1,
                     *           "created_at": "2026-11-21T10:00:00.000Z",
                     *           "updated_at": "2026-11-21T10:00:00.000Z"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        sources: {
                            /** Format: date-time */
                            created_at: string;
                            /** @description messages whose event was stored before (a redelivery) or an engine repeat */
                            duplicates: number;
                            format: string;
                            ingested: number;
                            instance_id: string | null;
                            /** @description why it is not consuming, in words */
                            last_error: string | null;
                            /** @description messages that can never be ingested, kept in …/parked */
                            parked: number;
                            received: number;
                            source_id: string;
                            /** @description connecting, consuming, reconnecting or failed (still retried) */
                            state: string;
                            /** Format: date-time */
                            updated_at: string;
                            /** @description with its password as **** */
                            url: string;
                        }[];
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A manage key cannot manage sources: this needs the admin key.
             *     - A publish key cannot manage sources: this needs the admin key.
             *     - A portal link cannot manage sources: this needs the admin key.
             *     - A read-only portal link cannot manage sources: this needs the admin key.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createSource: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "amqp://rabbit.internal:5672/%2F?queue=herald-events",
                 *       "format": "herald"
                 *     }
                 */
                "application/json": {
                    /** @description how each message's body is read: herald, waha, evolution */
                    format: string;
                    /** @description the instance every event goes to; without one, the body names it (herald's instance_id, WAHA's session) */
                    instance_id?: string | null;
                    /** @description amqp(s)://user:pass@host/vhost?queue=Q[&exchange=E&binding=K], nats://host/STREAM?consumer=C[&subject=S] or redis(s)://:pass@host/db?stream=S&group=G; the password is sealed and shown as **** */
                    url: string;
                };
            };
        };
        responses: {
            /** @description The source */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "source": {
                     *         "source_id": "string",
                     *         "url": "https://hooks.example.com/media/med_01jd5q7h3m5n7p9q1r3s5t7v9w?expires=1795341600&sig=…",
                     *         "format": "string",
                     *         "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *         "state": "string",
                     *         "last_error": "string",
                     *         "received": 1,
                     *         "ingested": 1,
                     *         "duplicates": 1,
                     *         "parked": 1,
                     *         "created_at": "2026-11-21T10:00:00.000Z",
                     *         "updated_at": "2026-11-21T10:00:00.000Z"
                     *       }
                     *     }
                     */
                    "application/json": {
                        source: {
                            /** Format: date-time */
                            created_at: string;
                            /** @description messages whose event was stored before (a redelivery) or an engine repeat */
                            duplicates: number;
                            format: string;
                            ingested: number;
                            instance_id: string | null;
                            /** @description why it is not consuming, in words */
                            last_error: string | null;
                            /** @description messages that can never be ingested, kept in …/parked */
                            parked: number;
                            received: number;
                            source_id: string;
                            /** @description connecting, consuming, reconnecting or failed (still retried) */
                            state: string;
                            /** Format: date-time */
                            updated_at: string;
                            /** @description with its password as **** */
                            url: string;
                        };
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - The body is not valid JSON.
             *     - A field breaks its rule: the url (scheme, host, port, path and parameters, the message names the part), a format Herald does not read, an instance_id of no instance, or **** for a password the source does not have.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A manage key cannot manage sources: this needs the admin key.
             *     - A publish key cannot manage sources: this needs the admin key.
             *     - A portal link cannot manage sources: this needs the admin key.
             *     - A read-only portal link cannot manage sources: this needs the admin key.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over this endpoint’s limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSource: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description src_ followed by 1 to 100 letters, digits, _ or -; the source id */
                source_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The source */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "source": {
                     *         "source_id": "string",
                     *         "url": "https://hooks.example.com/media/med_01jd5q7h3m5n7p9q1r3s5t7v9w?expires=1795341600&sig=…",
                     *         "format": "string",
                     *         "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *         "state": "string",
                     *         "last_error": "string",
                     *         "received": 1,
                     *         "ingested": 1,
                     *         "duplicates": 1,
                     *         "parked": 1,
                     *         "created_at": "2026-11-21T10:00:00.000Z",
                     *         "updated_at": "2026-11-21T10:00:00.000Z"
                     *       }
                     *     }
                     */
                    "application/json": {
                        source: {
                            /** Format: date-time */
                            created_at: string;
                            /** @description messages whose event was stored before (a redelivery) or an engine repeat */
                            duplicates: number;
                            format: string;
                            ingested: number;
                            instance_id: string | null;
                            /** @description why it is not consuming, in words */
                            last_error: string | null;
                            /** @description messages that can never be ingested, kept in …/parked */
                            parked: number;
                            received: number;
                            source_id: string;
                            /** @description connecting, consuming, reconnecting or failed (still retried) */
                            state: string;
                            /** Format: date-time */
                            updated_at: string;
                            /** @description with its password as **** */
                            url: string;
                        };
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description The source id in the path is not in its form (src_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A manage key cannot manage sources: this needs the admin key.
             *     - A publish key cannot manage sources: this needs the admin key.
             *     - A portal link cannot manage sources: this needs the admin key.
             *     - A read-only portal link cannot manage sources: this needs the admin key.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The source does not exist (or was deleted). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteSource: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description src_ followed by 1 to 100 letters, digits, _ or -; the source id */
                source_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted; every process stops consuming it within a second */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true
                     *     }
                     */
                    "application/json": {
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description The source id in the path is not in its form (src_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A manage key cannot manage sources: this needs the admin key.
             *     - A publish key cannot manage sources: this needs the admin key.
             *     - A portal link cannot manage sources: this needs the admin key.
             *     - A read-only portal link cannot manage sources: this needs the admin key.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The source does not exist (or was deleted). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateSource: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description src_ followed by 1 to 100 letters, digits, _ or -; the source id */
                source_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "amqp://rabbit.internal:5672/%2F?queue=herald-events",
                 *       "format": "herald"
                 *     }
                 */
                "application/json": {
                    /** @description how each message's body is read: herald, waha, evolution */
                    format: string;
                    /** @description the instance every event goes to; without one, the body names it (herald's instance_id, WAHA's session) */
                    instance_id?: string | null;
                    /** @description amqp(s)://user:pass@host/vhost?queue=Q[&exchange=E&binding=K], nats://host/STREAM?consumer=C[&subject=S] or redis(s)://:pass@host/db?stream=S&group=G; the password is sealed and shown as **** */
                    url: string;
                };
            };
        };
        responses: {
            /** @description The source */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "source": {
                     *         "source_id": "string",
                     *         "url": "https://hooks.example.com/media/med_01jd5q7h3m5n7p9q1r3s5t7v9w?expires=1795341600&sig=…",
                     *         "format": "string",
                     *         "instance_id": "ins_01jd5q7h2k9x4m8n3p6r0t1v2a",
                     *         "state": "string",
                     *         "last_error": "string",
                     *         "received": 1,
                     *         "ingested": 1,
                     *         "duplicates": 1,
                     *         "parked": 1,
                     *         "created_at": "2026-11-21T10:00:00.000Z",
                     *         "updated_at": "2026-11-21T10:00:00.000Z"
                     *       }
                     *     }
                     */
                    "application/json": {
                        source: {
                            /** Format: date-time */
                            created_at: string;
                            /** @description messages whose event was stored before (a redelivery) or an engine repeat */
                            duplicates: number;
                            format: string;
                            ingested: number;
                            instance_id: string | null;
                            /** @description why it is not consuming, in words */
                            last_error: string | null;
                            /** @description messages that can never be ingested, kept in …/parked */
                            parked: number;
                            received: number;
                            source_id: string;
                            /** @description connecting, consuming, reconnecting or failed (still retried) */
                            state: string;
                            /** Format: date-time */
                            updated_at: string;
                            /** @description with its password as **** */
                            url: string;
                        };
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /**
             * @description - The source id in the path is not in its form (src_…).
             *     - The body is not valid JSON.
             *     - A field breaks its rule: the url (scheme, host, port, path and parameters, the message names the part), a format Herald does not read, an instance_id of no instance, or **** for a password the source does not have.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A manage key cannot manage sources: this needs the admin key.
             *     - A publish key cannot manage sources: this needs the admin key.
             *     - A portal link cannot manage sources: this needs the admin key.
             *     - A read-only portal link cannot manage sources: this needs the admin key.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The source does not exist (or was deleted). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over this endpoint’s limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not sent as Content-Type: application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listParkedMessages: {
        parameters: {
            query?: {
                /** @description next_cursor of the page before */
                cursor?: string;
                /** @description at most this many (default 100) */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description src_ followed by 1 to 100 letters, digits, _ or -; the source id */
                source_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Messages that can never be ingested, oldest first */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "success": true,
                     *       "parked": [
                     *         {
                     *           "parked_at": "2026-11-21T10:00:00.000Z",
                     *           "reason": "string",
                     *           "body": "string"
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": {
                        next_cursor: string | null;
                        parked: {
                            /** @description the first 4 KiB of the message, as text */
                            body: string;
                            /** Format: date-time */
                            parked_at: string;
                            reason: string;
                        }[];
                        /** @enum {boolean} */
                        success: true;
                    };
                };
            };
            /** @description The source id in the path is not in its form (src_…). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - No Authorization: Bearer key.
             *     - A key or portal link Herald does not know (unknown or revoked).
             *     - A portal link past its expires_at.
             */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - A manage key cannot manage sources: this needs the admin key.
             *     - A publish key cannot manage sources: this needs the admin key.
             *     - A portal link cannot manage sources: this needs the admin key.
             *     - A read-only portal link cannot manage sources: this needs the admin key.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The source does not exist (or was deleted). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /**
             * @description - This client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every request from it is refused for the rest of that minute, whatever its key.
             *     - This key made more management requests per second than RATE_LIMIT_MANAGEMENT allows.
             */
            429: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A fault of Herald’s; the details are in its log, never in the answer. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After. */
            503: {
                headers: {
                    /** @description seconds to wait before retrying */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
