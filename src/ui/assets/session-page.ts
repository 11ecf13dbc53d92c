/**
 * The session page `/ui/instances/{instance_id}` (SPEC §9): the session's status and phone, its webhooks and its
 * delivery log, all refreshed together every few seconds from the public API.
 */
import { type ApiError, api, type Instance } from './api.ts';
import { deliveryLog } from './delivery-log.ts';
import { h } from './dom.ts';
import { formatPhone, plural, sessionLabel, sessionTone } from './format.ts';
import { Poller } from './poller.ts';
import { webhooksPanel } from './webhooks-panel.ts';

function sessionHeader() {
  const name = h('h1', {}, '…');
  const id = h('p', { class: 'mono muted small' });
  const status = h('span', { class: 'badge muted' });
  const phone = h('span', {});
  const summary = h('span', { class: 'muted' });
  const live = h('span', { class: 'live muted small' });
  const el = h(
    'section',
    { class: 'session-head card', 'aria-label': 'Session' },
    h(
      'div',
      {},
      h('p', { class: 'crumb small' }, h('a', { href: '/' }, 'Instances'), ' / session'),
      name,
      id,
    ),
    h(
      'dl',
      { class: 'session-facts' },
      h('div', {}, h('dt', {}, 'Status'), h('dd', { 'data-session-status': '' }, status)),
      h('div', {}, h('dt', {}, 'Phone'), h('dd', { 'data-session-phone': '' }, phone)),
      h('div', {}, h('dt', {}, 'Deliveries'), h('dd', {}, summary)),
    ),
    live,
  );
  return {
    el,
    update(i: Instance) {
      name.textContent = i.name || 'Unnamed session';
      document.title = `${i.name || i.instance_id} · Herald`;
      id.textContent = i.instance_id;
      status.textContent = sessionLabel(i.status);
      status.className = `badge ${sessionTone(i.status)}`;
      phone.textContent = formatPhone(i.phone);
      phone.className = i.phone ? 'mono' : 'muted';
      summary.textContent = i.counts.failed_deliveries
        ? `${plural(i.counts.failed_deliveries, 'failed delivery', 'failed deliveries')}`
        : 'None failed';
      summary.className = i.counts.failed_deliveries ? 'bad-text' : 'muted';
      live.textContent = `Live · updated ${new Date().toLocaleTimeString()}`;
    },
  };
}

export function sessionPageView(instanceId: string): HTMLElement {
  const header = sessionHeader();
  const problem = h('p', { class: 'banner bad', role: 'alert', hidden: true });
  const refresh = () => poller.now();
  const webhooks = webhooksPanel(instanceId, refresh);
  const log = deliveryLog(instanceId, refresh);

  const poller = new Poller(async () => {
    try {
      const [instance, hooks] = await Promise.all([
        api.getInstance(instanceId),
        api.listWebhooks(instanceId),
      ]);
      header.update(instance);
      webhooks.update(hooks);
      log.setContext(hooks, instance.counts);
      await log.refresh();
      problem.hidden = true;
    } catch (err) {
      const e = err as ApiError;
      problem.textContent =
        e.status === 404
          ? 'This instance does not exist (or was deleted).'
          : e.status === 403
            ? 'Your key belongs to another instance.'
            : e.message;
      problem.hidden = false;
      if (e.status === 404 || e.status === 403) poller.stop();
      throw err;
    }
  });
  void poller.now();

  return h('div', { class: 'page session' }, problem, header.el, webhooks.el, log.el);
}
