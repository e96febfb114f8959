// The dashboard's only script of its own (CSP allows no inline script): copy buttons, submit-on-change selects, and
// the message of a refused htmx action cleared once an action succeeds.
document.addEventListener('click', (event) => {
  const button = event.target.closest('[data-copy]');
  if (!button) return;
  const input = document.querySelector(button.dataset.copy);
  if (!input) return;
  input.select();
  const done = () => { button.textContent = 'Copied'; };
  if (navigator.clipboard) navigator.clipboard.writeText(input.value).then(done, () => { document.execCommand('copy'); done(); });
  else { document.execCommand('copy'); done(); }
});
document.addEventListener('change', (event) => {
  const select = event.target.closest('[data-submit-on-change]');
  if (select && select.form) select.form.requestSubmit();
});
document.addEventListener('htmx:afterRequest', (event) => {
  const shown = document.getElementById('action-error');
  if (shown && event.detail.successful) shown.replaceChildren();
});
