export { OzAgentLoop, OzStop, runOzAgent, type OzFinalEvent, type OzLoopOptions, type OzLoopResult } from './loop.js';
export { ModelConfigurationError, apiKeyFor, languageModelFor } from './model.js';
export { describeWorkspace, systemPrompt } from './prompt.js';
export { DEFAULT_TOOL_LIMITS, TOOL_CATEGORIES, createOzTools, type OzToolContext, type OzToolLimits } from './tools.js';
export { PathEscapeError, resolveInWorkspace } from './paths.js';
export { runShell, type ShellOptions, type ShellResult } from './shell.js';
