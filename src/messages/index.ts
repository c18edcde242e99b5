// The public surface of the messages slice: other slices and the composition root import only this module.
export { registerMessageRoutes } from './http.js';
export { MessagesService } from './service.js';
