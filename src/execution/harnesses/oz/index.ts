export { OzAgentLoop, OzStop, runOzAgent, type OzFinalEvent, type OzLoopOptions, type OzLoopResult } from './loop.js';
export { languageModel, languageModelFor } from './model.js';
export { ModelConfigurationError } from '../../../models/index.js';
export { describeWorkspace, systemPrompt } from './prompt.js';
export { DEFAULT_TOOL_LIMITS, TOOL_CATEGORIES, createOzTools, type OzToolContext, type OzToolLimits } from './tools.js';
export { PathEscapeError, resolveInWorkspace } from './paths.js';
export { runShell, type ShellOptions, type ShellResult } from './shell.js';
export { OzHarness, type OzHarnessOptions } from './harness.js';
