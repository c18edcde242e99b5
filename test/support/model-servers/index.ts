export { AnthropicServer } from './anthropic.js';
export { GeminiServer } from './gemini.js';
export { OpenAIChatServer } from './openai-chat.js';
export { OpenAIResponsesServer } from './openai-responses.js';
export { type RecordedRequest, ScriptedModelServer, type ScriptedToolCall, type ScriptedTurn } from './scripted.js';
