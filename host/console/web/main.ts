// The console's entry point (Vite bundles it with its imports and style.css): the router over the
// address's hash (#/dashboard, #/events?rule=..., #/events/ID, #/rules, #/errors,
// #/errors/PROJECT/ID), the page frame (navigation, who is signed in, sign out) and the sign-in
// gate: without a token every address shows the sign-in page.
import './style.css';
import { onSignedOut, signOut, token, userName } from './api.js';
import { h } from './dom.js';
import { dashboardPage } from './pages/dashboard.js';
import { eventDetailPage } from './pages/event-detail.js';
import { eventsPage } from './pages/events.js';
import { errorDetailPage, errorsPage } from './pages/errors.js';
import { rulesPage } from './pages/rules.js';
import { signInPage } from './pages/signin.js';

const main = document.getElementById('main')!;
const nav = document.getElementById('nav')!;
const signOutButton = document.getElementById('signout')!;
const who = document.getElementById('who')!;

/** The shown page's stop (timers, streams), run before the next page renders. */
let stopPage: (() => void) | undefined;

/** Shows the page the address names. */
async function route(): Promise<void> {
  stopPage?.();
  stopPage = undefined;
  const signedIn = token() !== '';
  nav.hidden = !signedIn;
  signOutButton.hidden = !signedIn;
  who.textContent = signedIn ? `Signed in as ${userName()}` : '';
  if (!signedIn) return signInPage(main, () => (location.hash === '#/dashboard' ? void route() : (location.hash = '#/dashboard')));
  const [path = '', query = ''] = location.hash.replace(/^#/, '').split('?');
  const parts = path.split('/').filter((p) => p !== '');
  const params = new URLSearchParams(query);
  for (const a of nav.querySelectorAll('a')) a.toggleAttribute('aria-current', a.getAttribute('href') === `#/${parts[0] ?? 'dashboard'}`);
  for (const a of nav.querySelectorAll('a[aria-current]')) a.setAttribute('aria-current', 'page');
  try {
    if (parts[0] === 'events' && parts[1]) await eventDetailPage(main, parts[1]);
    else if (parts[0] === 'events') stopPage = eventsPage(main, params);
    else if (parts[0] === 'rules') await rulesPage(main);
    else if (parts[0] === 'errors' && parts[1] && parts[2]) await errorDetailPage(main, parts[1], parts[2]);
    else if (parts[0] === 'errors') await errorsPage(main, params);
    else stopPage = dashboardPage(main, params);
  } catch (err) {
    if (token() === '') return; // a 401 signed out: the sign-in page is shown already
    main.replaceChildren(h('h1', {}, 'Something failed'), h('p', { class: 'problem', role: 'alert' }, (err as Error).message));
  }
}

// the skip link moves the focus; followed, its #main would be read as a route
document.querySelector('.skip')?.addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});
signOutButton.addEventListener('click', () => {
  signOut();
  void route();
});
onSignedOut(() => void route());
// a new page takes the focus (screen readers read it from the top), unless a control of it has it
window.addEventListener('hashchange', () => {
  void route().then(() => {
    if (!main.contains(document.activeElement)) main.focus({ preventScroll: true });
  });
});
void route();
