/**
 * Phones of hidden ids (`<id>@lid`): WhatsApp names more and more senders by a hidden id, and engines often send the
 * phone id beside it. Where, in WAHA's payloads:
 *   NOWEB (Baileys' message key, `_data.key`): `remoteJid`/`remoteJidAlt` in a private chat or a story,
 *     `participant`/`participantAlt` in a group; older Baileys `senderLid`/`senderPn`, `participantLid`/`participantPn`.
 *   GOWS (whatsmeow's MessageSource, `_data.Info` of a message, `_data` of a receipt): `Sender`/`SenderAlt`; its
 *     group events' `_data`: `Sender`/`SenderPN`.
 *   WAHA's group events: each participant's `id` and `pn`.
 *   WEBJS: nothing beside it.
 *   Evolution API: Baileys' key as NOWEB's, in `_evolution.key`.
 * Either id may be the hidden one. A pair read here teaches the instance; a sender with nothing beside it gets the
 * phone the instance learned.
 */

import { MESSAGE_KINDS } from './events.ts';
import { isBroadcast, isGroup, lidOf, phoneOf, senderOf } from './jid.ts';
import { isObj, type Obj } from './payload-rules.ts';
/** Phone digits by hidden id. */
export type LidPhones = ReadonlyMap<string, string>;

/** The hidden ids a payload pairs with a phone id, and those phones (digits). */
export function lidPairs(payload: unknown): Map<string, string> {
  const pairs = new Map<string, string>();
  if (!isObj(payload)) return pairs;
  const pair = (a: unknown, b: unknown) => {
    const [lid, phone] = [lidOf(a) ?? lidOf(b), phoneOf(a) ?? phoneOf(b)];
    if (lid !== null && phone !== null) pairs.set(lid, phone);
  };
  const data = isObj(payload._data) ? payload._data : {};
  // Evolution API's payloads carry Baileys' key too, in `_evolution` (Herald's name for Evolution's data).
  const evolution = isObj(payload._evolution) ? payload._evolution : {};
  for (const key of [data.key, evolution.key]) if (isObj(key)) keyPairs(key, pair);
  for (const source of [data.Info, data]) {
    if (!isObj(source)) continue;
    pair(source.Sender, source.SenderAlt);
    pair(source.Sender, source.SenderPN);
  }
  const group = isObj(payload.group) ? payload.group : {};
  for (const list of [group.participants, payload.participants]) {
    if (!Array.isArray(list)) continue;
    for (const p of list) if (isObj(p)) pair(p.id, p.pn);
  }
  return pairs;
}

/**
 * Baileys puts the sender's other id in `remoteJidAlt` outside groups (stories included) and in `participantAlt` in
 * one; older versions in `senderPn`/`senderLid`, `participantPn`/`participantLid`. On a message the session sent,
 * the alternative may be the session's own: the key is left alone.
 */
function keyPairs(key: Obj, pair: (a: unknown, b: unknown) => void): void {
  if (key.fromMe === true) return;
  const chat = key.remoteJid;
  const byParticipant = isGroup(chat) || isBroadcast(chat);
  const sender = byParticipant ? key.participant : chat;
  const others = byParticipant
    ? [key.participantAlt, key.participantPn, key.participantLid, isBroadcast(chat) ? key.remoteJidAlt : null]
    : [key.remoteJidAlt, key.senderPn, key.senderLid];
  for (const other of others) pair(sender, other);
}

/** The hidden id of a message's sender; null when it has a phone id, or when the session sent it. */
export function senderLid(message: Obj): string | null {
  return message.fromMe === true ? null : lidOf(senderOf(message));
}

/** A hidden-id sender's phone: the one the engine sent beside it, else the one in `learned`; null when neither. */
export function senderLidPhone(message: Obj, learned: LidPhones): string | null {
  const lid = senderLid(message);
  if (lid === null) return null;
  return lidPairs(message).get(lid) ?? learned.get(lid) ?? null;
}

/** One publish call's hidden ids: those to look up in what the instance learned, and the pairs its events carry. */
export interface LidBatch {
  lookup: string[];
  carried: Map<string, string>;
}

export function lidBatch(events: { kind: string; payload: unknown }[]): LidBatch {
  const carried = new Map<string, string>();
  const lookup = new Set<string>();
  for (const { kind, payload } of events) {
    if (!isObj(payload)) continue;
    for (const [lid, phone] of lidPairs(payload)) carried.set(lid, phone);
    const lid = MESSAGE_KINDS.includes(kind) ? senderLid(payload) : null;
    if (lid !== null) lookup.add(lid);
  }
  for (const lid of carried.keys()) lookup.add(lid);
  return { lookup: [...lookup].sort(), carried };
}

/** The carried pairs the instance does not know as they are: what to write. */
export function newPairs(carried: LidPhones, learned: LidPhones): [string, string][] {
  return [...carried].filter(([lid, phone]) => learned.get(lid) !== phone);
}
