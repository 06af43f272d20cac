// Parse Dashboard at /dashboard: `npm install parse-dashboard`, and log in with
// DASHBOARD_USER / DASHBOARD_PASS from .env. Without both it is not mounted
// (its configuration carries the master key); in production it needs HTTPS.
export { mountDashboard } from 'fastify-parse-kit'
