// The run's conversation, or its plain output when its harness writes text.
import { ApiProblem } from '../api/client';
import type { Conversation } from '../api/types';
import { ConversationView } from '../components/Conversation';
import { ErrorMessage, Loading } from '../components/ui';
import type { Resource } from '../hooks';

/** Whether the run's harness writes plain text (the conversation endpoint says operation_not_supported). */
export function isPlainText(conversation: Resource<Conversation | null>): boolean {
  return conversation.error instanceof ApiProblem && conversation.error.code === 'operation_not_supported';
}

export function RunConversation({
  conversation,
  output,
  ended,
}: {
  conversation: Resource<Conversation | null>;
  output: string[];
  ended: boolean;
}) {
  return (
    <>
      {conversation.loading && conversation.data === undefined && <Loading what="Loading the conversation" />}
      {conversation.data === null && (
        <p className="muted">
          {ended ? 'The agent said nothing in this run.' : 'The agent has not said anything yet.'}
        </p>
      )}
      {isPlainText(conversation) ? (
        <>
          <p className="muted">
            This run's harness writes plain text, so there is no conversation to show. Its output:
          </p>
          <pre className="output" role="region" tabIndex={0} aria-label="Output">
            {output.join('\n') || '(nothing yet)'}
          </pre>
        </>
      ) : (
        <ErrorMessage error={conversation.error} title="Could not load the conversation" />
      )}
      {conversation.data && <ConversationView conversation={conversation.data} />}
    </>
  );
}
