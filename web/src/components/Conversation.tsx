// The normalized conversation as a chat: the person's messages, the agent's text, and each tool call as a
// collapsible block holding its input and (paired by action_id) its result.
import type { Block, Conversation, Message, Step } from '../api/types';
import { Time } from './ui';

type ActionBlock = Extract<Block, { type: 'action' }>;
type ResultBlock = Extract<Block, { type: 'action_result' }>;

const ROLE_LABELS: Record<Message['role'], string> = {
  user: 'You',
  assistant: 'Agent',
  tool: 'Tool',
  system: 'System',
};

function show(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** A one-line gist of a tool call's input: the command, path or query when there is one. */
function gist(input: unknown): string {
  if (input && typeof input === 'object') {
    for (const name of ['command', 'path', 'file_path', 'query', 'pattern', 'url']) {
      const value = (input as Record<string, unknown>)[name];
      if (typeof value === 'string') return value.length > 80 ? `${value.slice(0, 79)}…` : value;
    }
  }
  return '';
}

function ToolCall({ action, result }: { action: ActionBlock; result: ResultBlock | undefined }) {
  const state = result?.state ?? 'running';
  const summary = gist(action.input);
  return (
    <details className={`tool tool-${state}`}>
      <summary>
        <span className="tool-name">{action.name}</span>
        {summary && <code className="tool-gist">{summary}</code>}
        <span className={`badge tool-state-${state}`}>{state}</span>
      </summary>
      <div className="tool-body">
        <h4>Input</h4>
        <pre>{show(action.input) || '(none)'}</pre>
        {result && (
          <>
            <h4>Output</h4>
            <pre>{show(result.output) || '(none)'}</pre>
          </>
        )}
      </div>
    </details>
  );
}

function EventNote({ block }: { block: Extract<Block, { type: 'event' }> }) {
  const data = (block.data ?? {}) as Record<string, unknown>;
  if (block.name === 'ask_user') return <p className="note">Asks: {String(data.question ?? '')}</p>;
  if (block.name === 'failed') return <p className="note note-error">Failed: {String(data.message ?? '')}</p>;
  if (block.name === 'artifact')
    return <p className="note">Reported an artifact ({String(data.artifact_type ?? 'unknown')}).</p>;
  return (
    <p className="note">
      {block.name}: <code>{show(block.data)}</code>
    </p>
  );
}

function StepView({ step }: { step: Step }) {
  const results = new Map<string, ResultBlock>();
  const actions = new Set<string>();
  for (const message of step.messages) {
    for (const block of message.content) {
      if (block.type === 'action_result') results.set(block.action_id, block);
      if (block.type === 'action') actions.add(block.id);
    }
  }
  return (
    <section className="step" aria-label={step.description ?? 'Step'}>
      <h3>
        {step.description ?? 'Step'} {step.started_at && <Time value={step.started_at} />}
      </h3>
      <ol className="chat">
        {step.messages.map((message, index) => {
          // Results shown inside their tool call are not shown again.
          const blocks = message.content.filter(
            (block) => !(block.type === 'action_result' && actions.has(block.action_id)),
          );
          if (blocks.length === 0) return null;
          return (
            <li key={index} className={`message message-${message.role}`}>
              <p className="message-role">
                {ROLE_LABELS[message.role] ?? message.role}
                {message.timestamp && (
                  <>
                    {' · '}
                    <Time value={message.timestamp} />
                  </>
                )}
              </p>
              {blocks.map((block, blockIndex) => {
                switch (block.type) {
                  case 'text':
                    return (
                      <div key={blockIndex} className="message-text">
                        {block.text}
                      </div>
                    );
                  case 'action':
                    return <ToolCall key={blockIndex} action={block} result={results.get(block.id)} />;
                  case 'action_result':
                    return (
                      <ToolCall
                        key={blockIndex}
                        action={{
                          type: 'action',
                          id: block.action_id,
                          category: block.category,
                          name: block.name,
                          input: null,
                        }}
                        result={block}
                      />
                    );
                  case 'event':
                    return <EventNote key={blockIndex} block={block} />;
                  default:
                    return null;
                }
              })}
            </li>
          );
        })}
      </ol>
      {step.summary && (
        <p className="step-summary">
          <strong>Summary:</strong> {step.summary}
        </p>
      )}
      {step.steps.map((child) => (
        <StepView key={child.id} step={child} />
      ))}
    </section>
  );
}

export function ConversationView({ conversation }: { conversation: Conversation }) {
  return (
    <div className="conversation">
      {conversation.steps.map((step) => (
        <StepView key={step.id} step={step} />
      ))}
    </div>
  );
}
