// When the example app mounts Parse Dashboard.
import t from 'tap'
import { dashboardDecision } from '../fixtures/dashboard.js'

t.test('dashboard mounting rules', async (t) => {
  t.match(dashboardDecision(false, {}), { mount: false, reason: /not installed/ })
  t.same(dashboardDecision(true, { DASHBOARD_USER: 'u', DASHBOARD_PASS: 'p', NODE_ENV: 'production' }), { mount: true, users: [{ user: 'u', pass: 'p' }] })
  t.match(dashboardDecision(true, { NODE_ENV: 'production' }), { mount: false, reason: /refusing to mount \/dashboard in production without DASHBOARD_USER and DASHBOARD_PASS/ })
  t.match(dashboardDecision(true, { NODE_ENV: 'production', DASHBOARD_USER: 'u' }), { mount: false })
  t.same(dashboardDecision(true, {}), { mount: true }, 'in development it mounts (with a warning) without credentials')
})
