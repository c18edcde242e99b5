export { ModelConfigurationError } from '../../../models/index.js';
export { OzHarness, type OzHarnessOptions } from './harness.js';
export { OzAgentLoop, type OzFinalEvent, type OzLoopOptions, type OzLoopResult, OzStop, runOzAgent } from './loop.js';
export { languageModel, languageModelFor } from './model.js';
export { PathEscapeError, resolveInWorkspace } from './paths.js';
export { describeWorkspace, systemPrompt } from './prompt.js';
export { runShell, type ShellOptions, type ShellResult } from './shell.js';
export { createOzTools, DEFAULT_TOOL_LIMITS, type OzToolContext, type OzToolLimits, TOOL_CATEGORIES } from './tools.js';
