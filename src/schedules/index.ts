// The public surface of the schedules slice: other slices and the composition root import only this module.
export { cronProblem } from './cron.js';
export { registerScheduleRoutes } from './http.js';
export { Scheduler } from './scheduler.js';
export { automationCronHistory, SchedulesService, syncAutomationSchedules } from './service.js';
