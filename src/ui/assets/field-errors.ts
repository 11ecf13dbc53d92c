/**
 * API validation errors shown next to the field they name: `events[2]` belongs to the events fieldset,
 * `destination_url` to its input. A complaint that names no field of the form is shown at the form's top.
 */
import type { ApiError } from './api.ts';
import { h } from './dom.ts';

/** The form field a detail's `field` names: its first segment, without index or sub-path. */
const rootOf = (field: string) => field.split(/[[.]/)[0];

export function clearErrors(form: HTMLElement): void {
  for (const el of form.querySelectorAll('.field-error')) el.remove();
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  for (const el of form.querySelectorAll('[aria-describedby]')) {
    const kept = (el.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .filter((id) => !id.startsWith('err-'));
    if (kept.length) el.setAttribute('aria-describedby', kept.join(' '));
    else el.removeAttribute('aria-describedby');
  }
  form.querySelector('.form-error')?.replaceChildren();
}

/** Each field has a `[data-field=name]` wrapper; its control gets aria-invalid and aria-describedby. */
export function showErrors(form: HTMLElement, error: ApiError): void {
  clearErrors(form);
  const unplaced: string[] = [];
  const details = error.details.length ? error.details : [{ field: '', message: error.message }];
  for (const d of details) {
    const wrapper = d.field ? form.querySelector(`[data-field="${CSS.escape(rootOf(d.field))}"]`) : null;
    if (!wrapper) {
      unplaced.push(d.field ? `${d.field}: ${d.message}` : d.message);
      continue;
    }
    const id = `err-${rootOf(d.field)}-${wrapper.querySelectorAll('.field-error').length}`;
    const text = d.field === rootOf(d.field) ? d.message : `${d.field}: ${d.message}`;
    wrapper.append(h('p', { class: 'field-error', id }, text));
    const control =
      wrapper.querySelector(`[name="${CSS.escape(rootOf(d.field))}"]`) ??
      wrapper.querySelector('input, select, textarea, fieldset') ??
      wrapper;
    control.setAttribute('aria-invalid', 'true');
    const described = control.getAttribute('aria-describedby');
    control.setAttribute('aria-describedby', described ? `${described} ${id}` : id);
  }
  const top = form.querySelector('.form-error');
  if (top && unplaced.length) top.replaceChildren(...unplaced.map((m) => h('p', {}, m)));
  // Focus goes to the first field in error (into a fieldset, its first control), where the reader must act.
  const first = form.querySelector<HTMLElement>('[aria-invalid]');
  const target = first?.matches('input, select, textarea')
    ? first
    : first?.querySelector<HTMLElement>('input, select');
  target?.focus();
}
