/**
 * The session page `/ui/instances/{instance_id}`: the session's status and phone, its webhooks and its
 * delivery log, all refreshed together every few seconds from the public API; for the admin key also the
 * instance's keys and deleting the instance.
 */
import { type ApiError, api, type Instance } from './api.ts';
import { deliveryLog } from './delivery-log.ts';
import { confirmAction } from './dialog.ts';
import { h } from './dom.ts';
import { formatClock, formatPhone, plural, sessionLabel, sessionTone } from './format.ts';
import { keysPanel } from './instance-keys.ts';
import { notify } from './notices.ts';
import { Poller } from './poller.ts';
import { sessionKey } from './session-key.ts';
import { webhooksPanel } from './webhooks-panel.ts';

function sessionHeader(onDelete: (() => void) | null) {
  const name = h('h1', {}, '…');
  const crumb = h('span', { 'aria-current': 'page' }, '…');
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
      // A portal shows one instance and no list: a breadcrumb would only say its name again, above the heading.
      sessionKey.role() === 'portal'
        ? null
        : h(
            'nav',
            { class: 'crumb small', 'aria-label': 'Breadcrumb' },
            h('a', { href: '/' }, 'Instances'),
            ' / ',
            crumb,
          ),
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
    onDelete
      ? h(
          'button',
          { type: 'button', class: 'button danger-quiet small delete-instance', onclick: onDelete },
          'Delete instance',
        )
      : null,
  );
  return {
    el,
    update(i: Instance) {
      name.textContent = i.name || 'Unnamed session';
      crumb.textContent = i.name || i.instance_id;
      // The portal's own title when the page is a portal link's (portal.ts brands it).
      document.title = `${i.name || i.instance_id} · ${document.querySelector('.brand')?.textContent?.trim() || 'Herald'}`;
      id.textContent = i.instance_id;
      status.textContent = sessionLabel(i.status);
      status.className = `badge ${sessionTone(i.status)}`;
      phone.textContent = formatPhone(i.phone);
      phone.className = i.phone ? 'mono' : 'muted';
      summary.textContent = i.counts.failed_deliveries
        ? `${plural(i.counts.failed_deliveries, 'failed delivery', 'failed deliveries')}`
        : 'None failed';
      summary.className = i.counts.failed_deliveries ? 'bad-text' : 'muted';
      live.textContent = `Live · updated ${formatClock(new Date())}`;
    },
  };
}

/** Deleting an instance takes its webhooks, keys and delivery log with it: asked first, naming what goes. */
async function deleteInstance(instanceId: string, name: string): Promise<void> {
  const ok = await confirmAction(
    `Delete ${name}?`,
    `The instance ${instanceId}, its webhooks (pending retries included), its instance keys and its delivery log are deleted. This cannot be undone.`,
    'Delete instance',
    true,
  );
  if (!ok) return;
  try {
    await api.deleteInstance(instanceId);
    Poller.stopAll();
    location.assign('/');
  } catch (err) {
    notify((err as ApiError).message, 'bad');
  }
}

export function sessionPageView(instanceId: string): HTMLElement {
  const admin = sessionKey.role() === 'admin';
  let instanceName = instanceId;
  const header = sessionHeader(admin ? () => void deleteInstance(instanceId, instanceName) : null);
  const keys = admin ? keysPanel(instanceId) : null;
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
      instanceName = instance.name || instance.instance_id;
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
  void keys?.refresh();

  return h('div', { class: 'page session' }, problem, header.el, webhooks.el, log.el, keys?.el);
}
