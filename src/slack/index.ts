// The public surface of the slack slice (issue 53). So far its parts that need no table: the request signature, the
// Events API's bodies read, and the bot's answers in a thread; the Events API route, the team's links and the runs
// follow (docs/slack.md says what is there).
export { chooseEnvironment, mentionPrompt, readSlackRequest, type SlackMessage, type SlackRequest } from './events.js';
export {
  SLACK_MAX_SKEW_SECONDS,
  type SlackSignatureRefusal,
  slackSignature,
  slackSignatureRefusal,
} from './signature.js';
export { SlackThreads } from './thread-answers.js';
