/** Modal dialogs on the native <dialog>: focus is trapped and Escape closes, without any code of ours. */
import { h, uid } from './dom.ts';

/** Opens a modal holding `content`, built with a function that closes it; removed from the page once closed. */
export function openDialog(title: string, content: (close: () => void) => Node[]): HTMLDialogElement {
  const heading = h('h2', { id: uid('dialog') }, title);
  const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': heading.id });
  const close = () => dialog.close();
  dialog.append(heading, ...content(close));
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}

/** Asks before something that cannot be undone; resolves true when confirmed. */
export function confirmAction(
  title: string,
  message: string,
  action: string,
  danger = false,
): Promise<boolean> {
  return new Promise((resolve) => {
    let answer = false;
    const dialog = openDialog(title, (close) => [
      h('p', {}, message),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'button secondary', onclick: close }, 'Cancel'),
        h(
          'button',
          {
            type: 'button',
            class: `button ${danger ? 'danger' : 'primary'}`,
            onclick: () => {
              answer = true;
              close();
            },
          },
          action,
        ),
      ),
    ]);
    dialog.addEventListener('close', () => resolve(answer));
  });
}
