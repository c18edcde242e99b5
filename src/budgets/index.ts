// The public surface of the budgets slice: other slices and the composition root import only this module.
export { registerBudgetRoutes } from './http.js';
export { BudgetsService } from './service.js';
