export { ScriptedModelServer, type RecordedRequest, type ScriptedToolCall, type ScriptedTurn } from './scripted.js';
export { OpenAIChatServer } from './openai-chat.js';
export { OpenAIResponsesServer } from './openai-responses.js';
export { AnthropicServer } from './anthropic.js';
export { GeminiServer } from './gemini.js';
