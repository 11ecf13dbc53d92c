/**
 * A delivery's chat and the delivery it waits for, as buttons: the chat filters the log to that chat's deliveries,
 * the delivery opens in the log. Used by a log row and by a delivery's detail.
 */
import { h } from './dom.ts';
import { chatLabel } from './format.ts';

export interface ChatActions {
  /** Filters the log to one chat's deliveries. */
  showChat(chat: string): void;
  /** Opens another delivery (the one a waiting delivery waits for), finding it when it is not on the page. */
  reveal(deliveryId: string): void;
}

/** The chat of a delivery as a button that filters the log to it. */
export function chatButton(ctx: ChatActions, chat: string): HTMLButtonElement {
  const label = chatLabel(chat);
  return h(
    'button',
    {
      type: 'button',
      class: 'chat-link mono',
      'data-focus': 'chat',
      'aria-label': `Chat ${label}: show only its deliveries`,
      title: 'Show only this chat’s deliveries',
      onclick: () => ctx.showChat(chat),
    },
    label,
  );
}

/** The delivery a waiting one waits for, as a button that opens it. */
export function waitedForButton(ctx: ChatActions, deliveryId: string): HTMLButtonElement {
  return h(
    'button',
    {
      type: 'button',
      class: 'chat-link mono',
      'data-focus': 'waits',
      title: 'Open this delivery',
      onclick: () => ctx.reveal(deliveryId),
    },
    deliveryId,
  );
}
