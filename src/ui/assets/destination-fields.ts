/**
 * A webhook's destination as its parts: a kind (an HTTPS endpoint or a broker) and a field per part of the URL,
 * composed into destination_url with each part percent-encoded, so that nobody has to write a broker URL by hand.
 * The formats are those src/domain/broker-url.ts parses on the server (it imports node:crypto, so the page cannot
 * share it). A saved broker URL comes with its password as ****, which the server reads as "keep the password"
 * for the same server and user; an unchanged destination is sent back verbatim, so that saving rewrites nothing.
 */
import { h, uid } from './dom.ts';

type Broker = 'amqp' | 'nats' | 'redis';
type Kind = 'http' | Broker;
/** A part of a broker URL: its name (as the URL and broker-url.ts's messages call it), its label, its help. */
type Part = [name: string, label: string, help?: string];

const KIND_LABELS: Record<Kind, string> = {
  http: 'HTTPS endpoint',
  amqp: 'RabbitMQ queue or exchange',
  nats: 'NATS JetStream subject',
  redis: 'Redis stream',
};
const PLACEHOLDERS: Record<string, string> = {
  host: 'broker.example.com',
  vhost: '/',
  subject: 'orders.created',
  db: '0',
  maxlen: 'never trimmed',
};
const endpoint = (user: string, help?: string): Part[] => [
  ['host', 'Host'],
  ['port', 'Port'],
  ['username', user, help],
  ['password', 'Password'],
];
/** Per broker: its schemes and default ports, without and with TLS, and its parts (the endpoint's first). */
const BROKERS: Record<Broker, { schemes: string[]; ports: number[]; parts: Part[] }> = {
  amqp: {
    schemes: ['amqp', 'amqps'],
    ports: [5672, 5671],
    parts: [
      ...endpoint('Username'),
      ['vhost', 'Vhost'],
      ['exchange', 'Exchange', 'Empty: the default exchange, which routes by queue name.'],
      ['routing_key', 'Routing key', 'With no exchange, the routing key is the queue’s name.'],
    ],
  },
  nats: {
    schemes: ['nats', 'tls'],
    ports: [4222, 4222],
    parts: [
      ...endpoint('Username or token', 'A token alone: leave the password empty.'),
      ['subject', 'Subject', 'One subject, no wildcards; a JetStream stream must capture it.'],
    ],
  },
  redis: {
    schemes: ['redis', 'rediss'],
    ports: [6379, 6379],
    parts: [
      ...endpoint('Username', 'Empty for a password alone.'),
      ['db', 'Database'],
      ['stream', 'Stream'],
      ['maxlen', 'Max length', 'maxlen: trim the stream to about this many entries; empty never trims.'],
    ],
  },
};
/** A broker's own parts, after the endpoint's four: the path's, then the query's. */
const ownParts = (b: Broker) => BROKERS[b].parts.slice(4).map(([name]) => name);
/** The words of broker-url.ts's messages that name a part, in the order tried ("routing_key" before "host"). */
const NAMED = 'routing_key exchange vhost subject stream maxlen database password **** port host'.split(' ');
const ALIASES: Record<string, string> = { database: 'db', '****': 'password' };
const KEPT = '**** keeps the saved password while host, port, user and TLS stay; else type it again.';

/**
 * A saved broker URL as its parts; null when it is no broker URL or does not parse (it is then shown as text). The
 * server took it, so its escapes decode.
 */
function parse(raw: string): { kind: Broker; tls: boolean; values: Record<string, string> } | null {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw)?.[1].toLowerCase() ?? '';
  const kind = (Object.keys(BROKERS) as Broker[]).find((k) => BROKERS[k].schemes.includes(scheme));
  if (!kind || !URL.canParse(raw)) return null;
  const url = new URL(raw);
  const values: Record<string, string> = {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port,
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    [ownParts(kind)[0]]: decodeURIComponent(url.pathname.slice(1)),
  };
  for (const [name, value] of url.searchParams) values[name] = value;
  return { kind, tls: scheme === BROKERS[kind].schemes[1], values };
}

function brokerPanel(kind: Broker, saved: ReturnType<typeof parse>) {
  const spec = BROKERS[kind];
  const [pathPart, ...query] = ownParts(kind);
  const values = saved?.kind === kind ? saved.values : {};
  const tls = h('input', { type: 'checkbox', id: uid('tls'), checked: saved?.kind === kind && saved.tls });
  const inputs: Record<string, HTMLInputElement> = {};
  const fields = spec.parts.map(([name, label, help]) => {
    const id = uid(name);
    const secret = name === 'password';
    inputs[name] = h('input', {
      id,
      name,
      type: secret ? 'password' : 'text',
      autocomplete: secret ? 'new-password' : 'off',
      spellcheck: 'false',
      placeholder: PLACEHOLDERS[name],
      value: values[name] ?? '',
    });
    const note = secret && values.password === '****' ? KEPT : help;
    return h(
      'div',
      { class: 'field' },
      h('label', { for: id }, label),
      inputs[name],
      note && h('p', { class: 'help' }, note),
    );
  });
  const defaultPort = () => String(spec.ports[tls.checked ? 1 : 0]);
  tls.addEventListener('change', () => {
    inputs.port.placeholder = defaultPort();
  });
  inputs.port.placeholder = defaultPort();
  const el = h(
    'div',
    { class: 'parts' },
    h('label', { class: 'check wide', for: tls.id }, tls, h('span', {}, `TLS (${spec.schemes[1]}://)`)),
    fields,
  );
  // The parts percent-encoded. The port and Redis's database are written even when left at their default (the URL
  // then says where it goes, and the server misreads "[::1]" without a port); the vhost "/" is no path at all.
  const compose = () => {
    const v = (name: string) => (name === 'password' ? inputs[name].value : inputs[name].value.trim());
    const enc = encodeURIComponent;
    const userinfo = `${enc(v('username'))}${v('password') ? `:${enc(v('password'))}` : ''}`;
    const auth = userinfo ? `${userinfo}@` : '';
    const host = v('host').includes(':') && !v('host').startsWith('[') ? `[${v('host')}]` : v('host');
    const port = v('port') || defaultPort();
    const path = kind === 'redis' ? v('db') || '0' : kind === 'amqp' && v('vhost') === '/' ? '' : v(pathPart);
    const params = query.filter((q) => v(q) !== '').map((q) => `${q}=${enc(v(q))}`);
    const scheme = spec.schemes[tls.checked ? 1 : 0];
    return `${scheme}://${auth}${host}:${port}/${enc(path)}${params.length ? `?${params.join('&')}` : ''}`;
  };
  return { el, inputs, compose };
}

export function destinationFields(current: string | null) {
  const saved = current === null ? null : parse(current);
  let kind: Kind = saved?.kind ?? 'http';
  const urlId = uid('url');
  const url = h('input', {
    id: urlId,
    name: 'destination_url',
    type: 'text',
    inputmode: 'url',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'https://example.com/webhooks/herald',
    value: saved ? '' : (current ?? ''),
  });
  const http = h(
    'div',
    { class: 'parts' },
    h('div', { class: 'field wide' }, h('label', { for: urlId }, 'Destination URL'), url),
  );
  const brokers = {
    amqp: brokerPanel('amqp', saved),
    nats: brokerPanel('nats', saved),
    redis: brokerPanel('redis', saved),
  };
  // Only the chosen kind's parts are on the page (each kind keeps what was typed in it), so labels stay unique.
  const panel = h('div', {}, kind === 'http' ? http : brokers[kind].el);
  const group = uid('kind');
  const radios = (Object.keys(KIND_LABELS) as Kind[]).map((k) => {
    const radio = h('input', { type: 'radio', name: group, value: k, checked: k === kind });
    radio.addEventListener('change', () => {
      kind = k;
      // The parts leaving the page drop their error marks: the next save's clearErrors cannot reach them there.
      for (const x of panel.querySelectorAll('[aria-invalid]')) x.removeAttribute('aria-invalid');
      panel.replaceChildren(k === 'http' ? http : brokers[k].el);
    });
    return h('label', { class: 'check' }, radio, KIND_LABELS[k]);
  });
  const el = h(
    'fieldset',
    { class: 'destination' },
    h('legend', {}, 'Destination'),
    h('div', { class: 'kinds' }, radios),
    panel,
  );
  const unchanged = saved ? brokers[saved.kind].compose() : null;

  return {
    el,
    /** destination_url: the saved one as it was when nothing changed (its spelling kept), else the parts composed. */
    value(): string {
      if (kind === 'http') return url.value.trim();
      const composed = brokers[kind].compose();
      return composed === unchanged && current !== null ? current : composed;
    },
    focus(): void {
      (kind === 'http' ? url : brokers[kind].inputs.host).focus();
    },
    /** Moves the mark of an API message about the destination to the part it names, if it names one. */
    mark(message: string): void {
      if (kind === 'http') return;
      const inputs = brokers[kind].inputs;
      const word = NAMED.find((w) => message.includes(w) && inputs[ALIASES[w] ?? w]);
      const part = word && inputs[ALIASES[word] ?? word];
      const marked = el.closest('[data-field]')?.querySelector('[aria-invalid]');
      if (!part || !marked || marked === part) return;
      for (const name of ['aria-invalid', 'aria-describedby']) {
        part.setAttribute(name, marked.getAttribute(name) ?? '');
        marked.removeAttribute(name);
      }
      part.focus();
    },
  };
}
