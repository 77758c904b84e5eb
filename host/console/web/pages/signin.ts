// The sign-in page: a personal access token of the API's users (`rae admin token create USER`),
// or the one the engine printed on its first start. There is no default password: a token the
// server does not accept is refused here, with the server's reason.
import { signIn } from '../api.js';
import { h } from '../dom.js';

/** Renders the form into `main`; `done` runs once a token was accepted. */
export function signInPage(main: HTMLElement, done: () => void): void {
  const input = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false', 'aria-describedby': 'token-help' });
  const problem = h('p', { id: 'signin-problem', class: 'problem', role: 'alert' });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    { class: 'signin card', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'Sign in'),
    h('div', { class: 'field' }, h('label', { for: 'token' }, 'Personal access token'), input),
    h('p', { id: 'token-help', class: 'muted' }, 'A token of the API (rae admin token create USER), or the one the engine printed on stderr at its first start.'),
    button,
    problem,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    problem.textContent = '';
    try {
      const result = await signIn(input.value.trim());
      if ('problem' in result) {
        problem.textContent = result.problem;
        input.focus();
      } else done();
    } catch (err) {
      problem.textContent = `Sign-in failed: ${(err as Error).message}`;
    } finally {
      button.disabled = false;
    }
  });
  main.replaceChildren(form);
  input.focus();
}
