-- The schema every migration in src/platform/db/migrations/ leaves, with the SQL functions of
-- src/runs/lifecycle/functions.sql, as pg_dump prints it. Generated: `npm run gen:schema` (needs PostgreSQL);
-- test/platform/schema-file.test.ts fails when it is stale. Read it; change the schema with a new migration.
--
-- PostgreSQL database dump
--

--
-- Name: pg_trgm; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

--
-- Name: EXTENSION pg_trgm; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION pg_trgm IS 'text similarity measurement and index searching based on trigrams';

--
-- Name: hangar_at_capacity(text, integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.hangar_at_capacity(team text, global_limit integer, per_team integer) RETURNS boolean
    LANGUAGE sql STABLE
    SET enable_bitmapscan TO 'off'
    AS $$
  SELECT (SELECT count(*) FROM (SELECT 1 FROM runs WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
            AND worker_host IS NULL LIMIT global_limit) busy) >= global_limit
      OR (SELECT count(*) FROM (SELECT 1 FROM runs WHERE state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
            AND worker_host IS NULL AND team_uid = team LIMIT per_team) busy) >= per_team
$$;

--
-- Name: hangar_claim_runs(text, integer, integer, integer, integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.hangar_claim_runs(engine text, lease_seconds integer, per_team integer, global_limit integer, batch integer, scan integer) RETURNS TABLE(id text, team_uid text, execution_id integer, prompt text, agent_config jsonb, environment_id text, conversation_id text, harness text, attachment_count smallint, state text)
    LANGUAGE plpgsql
    SET enable_bitmapscan TO 'off'
    AS $$
#variable_conflict use_column
DECLARE
  taken integer;
  passed_over boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(7240001);
  RETURN QUERY SELECT * FROM hangar_claim_runs_at(engine, lease_seconds, per_team, global_limit, batch, batch);
  GET DIAGNOSTICS taken = ROW_COUNT;
  IF taken >= batch OR scan <= batch THEN RETURN; END IF;
  -- Fewer than wanted: the queue is that short, or the global limit is reached, or runs of teams at their limit
  -- were passed over and runs of other teams may wait behind them.
  SELECT (SELECT count(*) FROM (SELECT 1 FROM runs r WHERE r.state = 'QUEUED' AND r.worker_host IS NULL
            ORDER BY r.created_at, r.id LIMIT batch) head) >= batch
     AND (SELECT count(*) FROM (SELECT 1 FROM runs r WHERE r.state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
            AND r.worker_host IS NULL LIMIT global_limit) busy) < global_limit
  INTO passed_over;
  IF NOT passed_over THEN RETURN; END IF;
  RETURN QUERY SELECT * FROM hangar_claim_runs_at(engine, lease_seconds, per_team, global_limit, batch - taken, scan);
END $$;

--
-- Name: hangar_claim_runs_at(text, integer, integer, integer, integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.hangar_claim_runs_at(engine text, lease_seconds integer, per_team integer, global_limit integer, batch integer, depth integer) RETURNS TABLE(id text, team_uid text, execution_id integer, prompt text, agent_config jsonb, environment_id text, conversation_id text, harness text, attachment_count smallint, state text)
    LANGUAGE plpgsql
    SET enable_bitmapscan TO 'off'
    AS $$
#variable_conflict use_column
BEGIN
  -- PL/pgSQL keeps the plan of this query for the session; a LANGUAGE sql function would plan it on every call.
  RETURN QUERY
  WITH active AS (
    SELECT r.team_uid, count(*)::int AS n FROM runs r
    WHERE r.state IN ('PENDING', 'CLAIMED', 'INPROGRESS') AND r.worker_host IS NULL GROUP BY r.team_uid
  ), head AS (
    SELECT r.id, r.team_uid, r.created_at FROM runs r
    WHERE r.state = 'QUEUED' AND r.worker_host IS NULL ORDER BY r.created_at, r.id LIMIT depth
  ), queued AS (
    SELECT h.id, h.team_uid, h.created_at, row_number() OVER (PARTITION BY h.team_uid ORDER BY h.created_at, h.id) AS position
    FROM head h
  ), chosen AS (
    SELECT q.id FROM queued q LEFT JOIN active a ON a.team_uid = q.team_uid
    WHERE coalesce(a.n, 0) + q.position <= per_team
    ORDER BY q.created_at, q.id
    LIMIT greatest(0, least(batch, global_limit - (SELECT coalesce(sum(a.n), 0)::int FROM active a)))
  ), claimed AS (
    UPDATE runs r SET state = 'CLAIMED', lease_owner = engine,
      lease_expires_at = clock_timestamp() + make_interval(secs => lease_seconds), updated_at = clock_timestamp()
    WHERE r.id IN (SELECT l.id FROM runs l WHERE l.id IN (SELECT c.id FROM chosen c) AND l.state = 'QUEUED' FOR UPDATE SKIP LOCKED)
    RETURNING r.id, r.team_uid, r.execution_id, r.prompt, r.agent_config, r.environment_id, r.conversation_id, r.harness,
      r.attachment_count, r.created_at
  ), events AS (
    INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
    SELECT gen_random_uuid()::text, c.id, c.execution_id::text, e.event_type, jsonb_build_object('engine', engine)
    FROM claimed c CROSS JOIN (VALUES (1, 'run_dispatched'), (2, 'oz_run_claimed')) AS e(n, event_type)
    ORDER BY c.id, e.n
  )
  SELECT c.id, c.team_uid, c.execution_id, c.prompt, c.agent_config, c.environment_id, c.conversation_id, c.harness,
    c.attachment_count, 'CLAIMED'::text
  FROM claimed c ORDER BY c.created_at, c.id;
END $$;

--
-- Name: hangar_engine_locked(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.hangar_engine_locked(engine text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  SELECT EXISTS (
    SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 7240002 AND l.objsubid = 2
      AND l.objid::bigint = (hashtext(engine)::bigint & 4294967295)
      AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database()))
$$;

--
-- Name: hangar_finish_executions(text, text[], integer[], text[], text[], text[], text[], text[], text[], integer[], text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.hangar_finish_executions(engine text, ids text[], execution_ids integer[], states text[], status_messages text[], usages text[], debug_sessions text[], events text[], line_runs text[], line_executions integer[], line_streams text[], lines text[]) RETURNS TABLE(id text)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM runs r WHERE r.id = ANY(ids) ORDER BY r.id FOR NO KEY UPDATE;
  INSERT INTO run_transcript (run_id, execution_id, stream, line)
  SELECT * FROM unnest(line_runs, line_executions, line_streams, lines);
  RETURN QUERY
  WITH input AS (
    SELECT * FROM unnest(ids, execution_ids, states, status_messages, usages, debug_sessions, events)
      AS i(id, execution_id, state, status_message, usage, debug_session, events)
  ), ended AS (
    UPDATE runs r SET state = i.state, status_message = i.status_message::jsonb, ended_at = clock_timestamp(),
      updated_at = clock_timestamp(), lease_owner = NULL, lease_expires_at = NULL, sandbox_running = false,
      request_usage = coalesce(hangar_usage_total(r.usage_before, i.usage::jsonb), r.request_usage),
      debug_session = i.debug_session::jsonb
    FROM input i
    WHERE r.id = i.id AND r.lease_owner = engine AND r.state IN ('PENDING', 'CLAIMED', 'INPROGRESS')
      AND r.execution_id = i.execution_id
      AND (i.state NOT IN ('SUCCEEDED', 'BLOCKED') OR NOT EXISTS (
        SELECT 1 FROM run_inputs w WHERE w.run_id = r.id AND w.purpose = 'agent' AND w.delivered_at IS NULL))
    RETURNING r.id, i.execution_id, i.events
  ), inserted AS (
    INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, payload)
    SELECT gen_random_uuid()::text, s.id, s.execution_id::text, x.value->>'type', x.value->'payload'
    FROM ended s CROSS JOIN LATERAL jsonb_array_elements(s.events::jsonb) WITH ORDINALITY AS x(value, n)
    ORDER BY s.id, x.n
  )
  SELECT e.id FROM ended e;
END $$;

--
-- Name: hangar_lock_engine(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.hangar_lock_engine(engine text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM pg_advisory_lock(7240002, hashtext(engine));
  INSERT INTO engines (id, locked_at, heartbeat_at) VALUES (engine, clock_timestamp(), clock_timestamp())
  ON CONFLICT (id) DO UPDATE SET locked_at = clock_timestamp(), heartbeat_at = clock_timestamp();
END $$;

--
-- Name: hangar_notify_dispatch(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.hangar_notify_dispatch() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM pg_notify('hangar_dispatch', '');
  RETURN NULL;
END $$;

--
-- Name: hangar_notify_run_activity(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.hangar_notify_run_activity() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM pg_notify('hangar_run_activity', NEW.run_id);
  RETURN NULL;
END $$;

--
-- Name: hangar_notify_run_cancelled(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.hangar_notify_run_cancelled() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM pg_notify('hangar_run_control', 'cancel:' || NEW.id);
  RETURN NULL;
END $$;

--
-- Name: hangar_notify_run_input(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.hangar_notify_run_input() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM pg_notify('hangar_run_control', NEW.purpose || ':' || NEW.run_id);
  RETURN NULL;
END $$;

--
-- Name: hangar_run_overview_change(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.hangar_run_overview_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED') THEN
    INSERT INTO run_overview_changes (team_uid, created_at, started_at, ended_at, state, model_id, error_code,
      schedule_id, inference_cost, sign, claimed_at, agent_seconds)
    VALUES (OLD.team_uid, OLD.created_at, OLD.started_at, OLD.ended_at, OLD.state, OLD.model_id, OLD.error_code,
      OLD.schedule_id, OLD.inference_cost, -1, OLD.claimed_at, OLD.agent_seconds);
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.state IN ('SUCCEEDED', 'FAILED', 'BLOCKED', 'ERROR', 'CANCELLED') THEN
    INSERT INTO run_overview_changes (team_uid, created_at, started_at, ended_at, state, model_id, error_code,
      schedule_id, inference_cost, sign, claimed_at, agent_seconds)
    VALUES (NEW.team_uid, NEW.created_at, NEW.started_at, NEW.ended_at, NEW.state, NEW.model_id, NEW.error_code,
      NEW.schedule_id, NEW.inference_cost, 1, NEW.claimed_at, NEW.agent_seconds);
  END IF;
  RETURN NULL;
END $$;

--
-- Name: hangar_run_times(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.hangar_run_times() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF NEW.claimed_at IS NULL AND NEW.state IN ('CLAIMED', 'INPROGRESS') THEN
    NEW.claimed_at := clock_timestamp();
  END IF;
  IF NEW.agent_started_at IS NOT NULL AND NEW.state NOT IN ('PENDING', 'CLAIMED', 'INPROGRESS') THEN
    NEW.agent_seconds := coalesce(NEW.agent_seconds, 0)
      + greatest(0, date_part('epoch', coalesce(NEW.ended_at, clock_timestamp()) - NEW.agent_started_at));
    NEW.agent_started_at := NULL;
  END IF;
  RETURN NEW;
END $$;

--
-- Name: hangar_usage_total(jsonb, jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.hangar_usage_total(earlier jsonb, latest jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$
  SELECT CASE
    WHEN latest IS NULL THEN NULL
    WHEN earlier IS NULL OR jsonb_typeof(earlier) <> 'object' OR jsonb_typeof(latest) <> 'object' THEN latest
    ELSE (SELECT coalesce(jsonb_object_agg(k,
        CASE WHEN jsonb_typeof(earlier -> k) = 'number' AND jsonb_typeof(latest -> k) = 'number'
          THEN to_jsonb((earlier ->> k)::numeric + (latest ->> k)::numeric)
          ELSE coalesce(latest -> k, earlier -> k) END), '{}'::jsonb)
      FROM (SELECT jsonb_object_keys(earlier) UNION SELECT jsonb_object_keys(latest)) keys(k))
  END
$$;

--
-- Name: webhook_replay_keys_forget(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_replay_keys_forget() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  DELETE FROM webhook_replay_keys WHERE webhook_uid = OLD.uid;
  RETURN OLD;
END;
$$;

--
-- Name: agent_identities; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.agent_identities (
    uid text NOT NULL,
    team_uid text NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    description text,
    prompt text,
    environment_id text,
    base_model text,
    worker_host text,
    skills jsonb DEFAULT '[]'::jsonb NOT NULL,
    secrets jsonb DEFAULT '[]'::jsonb NOT NULL,
    mcp_servers jsonb,
    harness jsonb,
    created_by_uid text,
    factory_uid text,
    agent_type text DEFAULT 'CUSTOM'::text NOT NULL,
    harness_auth_secrets jsonb,
    credential_strategy text,
    on_behalf_of_enabled boolean DEFAULT false NOT NULL,
    default_runner_uid text,
    CONSTRAINT agent_identities_agent_type_check CHECK ((agent_type = ANY (ARRAY['FOREMAN'::text, 'TRIAGE'::text, 'SPEC'::text, 'IMPLEMENT'::text, 'REVIEW'::text, 'VERIFY'::text, 'CUSTOM'::text]))),
    CONSTRAINT agent_identities_credential_strategy_check CHECK ((credential_strategy = ANY (ARRAY['CREATOR'::text, 'EXECUTOR'::text])))
);

--
-- Name: agent_messages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.agent_messages (
    message_id text NOT NULL,
    team_uid text NOT NULL,
    root_run_id text NOT NULL,
    sender_run_id text NOT NULL,
    recipient_run_id text NOT NULL,
    subject text NOT NULL,
    body text NOT NULL,
    sent_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    delivered_at timestamp with time zone,
    read_at timestamp with time zone
);

--
-- Name: api_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_keys (
    uid text NOT NULL,
    key_hash text NOT NULL,
    display_prefix text NOT NULL,
    name text NOT NULL,
    user_uid text,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    revoked_at timestamp with time zone,
    agent_uid text,
    CONSTRAINT api_keys_one_principal CHECK (((user_uid IS NULL) <> (agent_uid IS NULL)))
);

--
-- Name: artifacts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.artifacts (
    uid text NOT NULL,
    run_id text NOT NULL,
    team_uid text NOT NULL,
    artifact_type text NOT NULL,
    data jsonb DEFAULT '{}'::jsonb NOT NULL,
    is_public boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    execution_id integer,
    blob_key text,
    content_type text,
    size_bytes bigint,
    canonical_url text,
    CONSTRAINT artifacts_artifact_type_check CHECK ((artifact_type = ANY (ARRAY['PLAN'::text, 'PULL_REQUEST'::text, 'SCREENSHOT'::text, 'FILE'::text, 'EXTERNAL_REFERENCE'::text])))
);

--
-- Name: audit_log; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_log (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    team_uid text,
    actor_type text NOT NULL,
    actor_uid text NOT NULL,
    key_uid text,
    client_address text,
    action text NOT NULL,
    target text,
    details jsonb DEFAULT '{}'::jsonb NOT NULL
);

--
-- Name: audit_log_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.audit_log_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: audit_log_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.audit_log_id_seq OWNED BY public.audit_log.id;

--
-- Name: auth_failure_windows; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_failure_windows (
    client text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    shard smallint NOT NULL,
    count integer NOT NULL
);

--
-- Name: automation_firings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.automation_firings (
    delivery_seq bigint,
    automation_id text NOT NULL,
    run_id text,
    error text,
    fired_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    github_delivery_id text,
    github_event text,
    CONSTRAINT automation_firings_origin CHECK ((((delivery_seq IS NOT NULL) AND (github_delivery_id IS NULL)) OR ((delivery_seq IS NULL) AND (github_delivery_id IS NOT NULL))))
);

--
-- Name: automations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.automations (
    id text NOT NULL,
    team_uid text NOT NULL,
    factory_uid text NOT NULL,
    name text NOT NULL,
    prompt text NOT NULL,
    enabled boolean NOT NULL,
    agent_uid text,
    agent_config jsonb,
    triggers jsonb NOT NULL,
    webhook_uids text[] DEFAULT '{}'::text[] NOT NULL,
    created_by_uid text NOT NULL,
    updated_by_uid text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: engines; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.engines (
    id text NOT NULL,
    locked_at timestamp with time zone,
    heartbeat_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: environment_access; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.environment_access (
    environment_uid text NOT NULL,
    team_uid text NOT NULL,
    via text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    secrets_allowed_at timestamp with time zone,
    secrets_allowed_by text,
    CONSTRAINT environment_access_via_check CHECK ((via = ANY (ARRAY['guest'::text, 'link'::text])))
);

--
-- Name: environment_snapshots; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.environment_snapshots (
    id text NOT NULL,
    environment_uid text NOT NULL,
    team_uid text NOT NULL,
    key text NOT NULL,
    base_key text NOT NULL,
    commits jsonb DEFAULT '{}'::jsonb NOT NULL,
    state text DEFAULT 'creating'::text NOT NULL,
    size_bytes bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    last_used_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT environment_snapshots_state_check CHECK ((state = ANY (ARRAY['creating'::text, 'ready'::text])))
);

--
-- Name: environments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.environments (
    uid text NOT NULL,
    team_uid text NOT NULL,
    config jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    creator_type text,
    creator_uid text,
    setup_failed boolean DEFAULT false NOT NULL,
    share_token_hash text,
    last_editor_type text,
    last_editor_uid text,
    CONSTRAINT environments_creator_type_check CHECK ((creator_type = ANY (ARRAY['user'::text, 'service_account'::text]))),
    CONSTRAINT environments_last_editor_type_check CHECK ((last_editor_type = ANY (ARRAY['user'::text, 'service_account'::text]))),
    CONSTRAINT environments_uid_check CHECK ((uid ~ '^[A-Za-z0-9]{22}$'::text))
);

--
-- Name: factories; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.factories (
    uid text NOT NULL,
    team_uid text NOT NULL,
    name text NOT NULL,
    is_default boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    description text,
    CONSTRAINT factories_uid_check CHECK ((uid ~ '^[A-Za-z0-9]{22}$'::text))
);

--
-- Name: factory_skills; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.factory_skills (
    factory_uid text NOT NULL,
    team_uid text NOT NULL,
    name text NOT NULL,
    description text NOT NULL,
    prompt text NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: github_allowed_logins; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.github_allowed_logins (
    team_uid text NOT NULL,
    installation_id bigint NOT NULL,
    login text NOT NULL,
    user_uid text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT github_allowed_logins_login_check CHECK ((login = lower(login)))
);

--
-- Name: github_links; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.github_links (
    id bigint NOT NULL,
    team_uid text NOT NULL,
    installation_id bigint,
    account_login text,
    token_secret text,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    service_user_uid text,
    CONSTRAINT github_links_check CHECK ((((installation_id IS NOT NULL) AND (account_login IS NOT NULL) AND (token_secret IS NULL)) OR ((installation_id IS NULL) AND (account_login IS NULL) AND (token_secret IS NOT NULL))))
);

--
-- Name: github_links_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.github_links ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.github_links_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: github_thread_replies; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.github_thread_replies (
    run_id text NOT NULL,
    installation_id bigint NOT NULL,
    owner text NOT NULL,
    repo text NOT NULL,
    comment_id bigint NOT NULL,
    outcome_posted boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: github_trigger_refusals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.github_trigger_refusals (
    repository text NOT NULL,
    number bigint NOT NULL,
    login text NOT NULL,
    reason text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT github_trigger_refusals_reason_check CHECK ((reason = ANY (ARRAY['access'::text, 'rate'::text])))
);

--
-- Name: github_trigger_starts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.github_trigger_starts (
    id bigint NOT NULL,
    repository text NOT NULL,
    login text NOT NULL,
    started_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: github_trigger_starts_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.github_trigger_starts ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.github_trigger_starts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: instance_settings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.instance_settings (
    key text NOT NULL,
    value text,
    iv bytea,
    auth_tag bytea,
    ciphertext bytea,
    CONSTRAINT instance_settings_one_value CHECK ((((value IS NULL) = (ciphertext IS NOT NULL)) AND ((ciphertext IS NULL) = (iv IS NULL)) AND ((iv IS NULL) = (auth_tag IS NULL))))
);

--
-- Name: mcp_server_shares; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mcp_server_shares (
    server_uid text NOT NULL,
    team_uid text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: mcp_servers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mcp_servers (
    uid text NOT NULL,
    team_uid text NOT NULL,
    name text NOT NULL,
    definition jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT mcp_servers_uid_check CHECK ((uid ~ '^[A-Za-z0-9]{22}$'::text))
);

--
-- Name: run_attachments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_attachments (
    run_id text NOT NULL,
    "position" integer NOT NULL,
    file_name text NOT NULL,
    mime_type text NOT NULL,
    data bytea NOT NULL
);

--
-- Name: run_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_events (
    event_uuid text NOT NULL,
    seq bigint NOT NULL,
    run_id text NOT NULL,
    execution_id text,
    event_type text NOT NULL,
    occurred_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    payload jsonb
);

--
-- Name: run_events_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.run_events ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.run_events_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: run_idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_idempotency_keys (
    team_uid text NOT NULL,
    idempotency_key text NOT NULL,
    request_hash text NOT NULL,
    answer jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: run_inputs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_inputs (
    seq bigint NOT NULL,
    run_id text NOT NULL,
    execution_id integer NOT NULL,
    purpose text DEFAULT 'agent'::text NOT NULL,
    message text NOT NULL,
    mode text,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    delivered_at timestamp with time zone,
    CONSTRAINT run_inputs_purpose_check CHECK ((purpose = ANY (ARRAY['agent'::text, 'debug'::text])))
);

--
-- Name: run_inputs_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.run_inputs ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.run_inputs_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: run_overview_changes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_overview_changes (
    team_uid text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    started_at timestamp with time zone,
    ended_at timestamp with time zone,
    state text NOT NULL,
    model_id text,
    error_code text,
    schedule_id text,
    inference_cost double precision,
    sign smallint NOT NULL,
    claimed_at timestamp with time zone,
    agent_seconds double precision
);

--
-- Name: run_overview_hours; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_overview_hours (
    team_uid text NOT NULL,
    hour timestamp with time zone NOT NULL,
    kind text NOT NULL,
    left_hour timestamp with time zone,
    state text,
    model_id text,
    error_code text,
    schedule_id text,
    bin integer,
    runs integer NOT NULL,
    cost numeric
);

--
-- Name: run_scores; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_scores (
    scored_run_id text NOT NULL,
    scorer_id integer NOT NULL,
    judge_run_id text NOT NULL,
    classification text NOT NULL,
    score double precision NOT NULL,
    passed boolean NOT NULL,
    reason text NOT NULL,
    failed boolean NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: run_share_links; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_share_links (
    id uuid NOT NULL,
    run_id text NOT NULL,
    team_uid text NOT NULL,
    public_access text NOT NULL,
    secret_hash text NOT NULL,
    created_by_type text NOT NULL,
    created_by_uid text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    revoked_at timestamp with time zone,
    revoked_by_uid text,
    CONSTRAINT run_share_links_public_access_check CHECK ((public_access = ANY (ARRAY['VIEWER'::text, 'EDITOR'::text])))
);

--
-- Name: run_transcript; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_transcript (
    seq bigint NOT NULL,
    run_id text NOT NULL,
    execution_id integer NOT NULL,
    stream text NOT NULL,
    line text NOT NULL,
    at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT run_transcript_stream_check CHECK ((stream = ANY (ARRAY['input'::text, 'output'::text])))
);

--
-- Name: run_transcript_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.run_transcript ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.run_transcript_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: runners; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runners (
    uid text NOT NULL,
    team_uid text NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    shape jsonb DEFAULT '{}'::jsonb NOT NULL,
    factory_uid text,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT runners_uid_check CHECK ((uid ~ '^[A-Za-z0-9]{22}$'::text))
);

--
-- Name: runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runs (
    id text NOT NULL,
    team_uid text NOT NULL,
    title text NOT NULL,
    prompt text NOT NULL,
    state text NOT NULL,
    source text NOT NULL,
    execution_location text NOT NULL,
    mode text DEFAULT 'normal'::text NOT NULL,
    scope_type text NOT NULL,
    scope_uid text NOT NULL,
    agent_config jsonb DEFAULT '{}'::jsonb NOT NULL,
    config_name text,
    model_id text,
    skill_spec text,
    environment_id text,
    worker_host text,
    schedule jsonb,
    schedule_id text,
    parent_run_id text,
    conversation_id text,
    creator_type text NOT NULL,
    creator_uid text NOT NULL,
    executor_type text NOT NULL,
    executor_uid text NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    interactive boolean DEFAULT false NOT NULL,
    status_message jsonb,
    request_usage jsonb,
    session_id text,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    started_at timestamp with time zone,
    ended_at timestamp with time zone,
    search_text text GENERATED ALWAYS AS (lower(((((title || ' '::text) || "left"(prompt, 2000)) || ' '::text) || COALESCE(skill_spec, ''::text)))) STORED,
    schedule_tick timestamp with time zone,
    agent_skill jsonb,
    execution_id integer DEFAULT 1 NOT NULL,
    harness text,
    lease_owner text,
    lease_expires_at timestamp with time zone,
    sandbox_running boolean DEFAULT false NOT NULL,
    debug_session jsonb,
    attachment_count smallint DEFAULT 0 NOT NULL,
    inference_cost double precision GENERATED ALWAYS AS (
CASE
    WHEN (jsonb_typeof((request_usage -> 'inference_cost'::text)) = 'number'::text) THEN ((request_usage ->> 'inference_cost'::text))::double precision
    ELSE NULL::double precision
END) STORED,
    error_code text GENERATED ALWAYS AS ((status_message ->> 'error_code'::text)) STORED,
    trace_parent text,
    usage_before jsonb,
    claimed_at timestamp with time zone,
    agent_started_at timestamp with time zone,
    agent_seconds double precision,
    agent_start_intent integer,
    root_run_id text,
    automation_id text,
    factory_uid text,
    trigger_url text,
    CONSTRAINT runs_creator_type_check CHECK ((creator_type = ANY (ARRAY['user'::text, 'service_account'::text]))),
    CONSTRAINT runs_execution_location_check CHECK ((execution_location = ANY (ARRAY['LOCAL'::text, 'REMOTE'::text]))),
    CONSTRAINT runs_executor_type_check CHECK ((executor_type = ANY (ARRAY['user'::text, 'service_account'::text]))),
    CONSTRAINT runs_scope_type_check CHECK ((scope_type = ANY (ARRAY['User'::text, 'Team'::text]))),
    CONSTRAINT runs_state_check CHECK ((state = ANY (ARRAY['QUEUED'::text, 'PENDING'::text, 'CLAIMED'::text, 'INPROGRESS'::text, 'SUCCEEDED'::text, 'FAILED'::text, 'BLOCKED'::text, 'ERROR'::text, 'CANCELLED'::text])))
);

--
-- Name: schedules; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schedules (
    id text NOT NULL,
    team_uid text NOT NULL,
    name text NOT NULL,
    cron_schedule text NOT NULL,
    prompt text NOT NULL,
    enabled boolean NOT NULL,
    agent_config jsonb,
    agent_uid text,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    scope_type text NOT NULL,
    scope_uid text NOT NULL,
    created_by_uid text NOT NULL,
    updated_by_uid text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    next_run_at timestamp with time zone,
    last_ran_at timestamp with time zone,
    last_spawn_error text,
    automation_id text,
    mode text,
    CONSTRAINT schedules_mode_check CHECK ((mode = ANY (ARRAY['normal'::text, 'plan'::text, 'orchestrate'::text]))),
    CONSTRAINT schedules_scope_type_check CHECK ((scope_type = ANY (ARRAY['User'::text, 'Team'::text])))
);

--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: scorers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scorers (
    id integer NOT NULL,
    team_uid text NOT NULL,
    name text NOT NULL,
    rubric text NOT NULL,
    labels jsonb NOT NULL,
    passing_score double precision NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: scorers_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scorers ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.scorers_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: secret_grants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.secret_grants (
    team_uid text NOT NULL,
    secret_name text NOT NULL,
    grantee_type text NOT NULL,
    grantee_uid text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT secret_grants_grantee_type_check CHECK ((grantee_type = ANY (ARRAY['member'::text, 'agent'::text, 'environment'::text])))
);

--
-- Name: secrets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.secrets (
    team_uid text NOT NULL,
    name text NOT NULL,
    iv bytea NOT NULL,
    auth_tag bytea NOT NULL,
    ciphertext bytea NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT secrets_name_check CHECK ((name ~ '^[A-Za-z_][A-Za-z0-9_.-]{0,127}$'::text))
);

--
-- Name: team_budgets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.team_budgets (
    team_uid text NOT NULL,
    monthly_budget_usd numeric NOT NULL,
    warn_at_percent integer DEFAULT 80 NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT team_budgets_monthly_budget_usd_check CHECK ((monthly_budget_usd >= (0)::numeric)),
    CONSTRAINT team_budgets_warn_at_percent_check CHECK (((warn_at_percent >= 1) AND (warn_at_percent <= 100)))
);

--
-- Name: team_members; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.team_members (
    team_uid text NOT NULL,
    user_uid text NOT NULL,
    role text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT team_members_role_check CHECK ((role = ANY (ARRAY['admin'::text, 'member'::text])))
);

--
-- Name: teams; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.teams (
    uid text NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    uid text NOT NULL,
    display_name text NOT NULL,
    email text,
    is_admin boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: webhook_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_deliveries (
    seq bigint NOT NULL,
    webhook_uid text NOT NULL,
    delivery_id text NOT NULL,
    status text NOT NULL,
    size_bytes integer NOT NULL,
    received_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    body text,
    evaluated_at timestamp with time zone,
    replay_key text,
    identity_reused boolean DEFAULT false NOT NULL,
    CONSTRAINT webhook_deliveries_status_check CHECK ((status = ANY (ARRAY['Accepted'::text, 'Duplicate'::text, 'Rejected (auth)'::text, 'Rejected (invalid JSON)'::text, 'Rejected (too large)'::text])))
);

--
-- Name: webhook_deliveries_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.webhook_deliveries ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.webhook_deliveries_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: webhook_rate_windows; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_rate_windows (
    webhook_uid text NOT NULL,
    sender text NOT NULL,
    kind text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    shard smallint NOT NULL,
    count integer NOT NULL
);

--
-- Name: webhook_replay_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_replay_keys (
    webhook_uid text NOT NULL,
    replay_key text NOT NULL,
    first_seen_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    expires_at timestamp with time zone
);

--
-- Name: webhooks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhooks (
    uid text NOT NULL,
    team_uid text NOT NULL,
    factory_uid text NOT NULL,
    name text NOT NULL,
    auth_mode text NOT NULL,
    signature_scheme text,
    secret_iv bytea,
    secret_auth_tag bytea,
    secret_ciphertext bytea,
    secret_name text,
    delivery_id_header text,
    enabled boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT webhooks_auth_mode_check CHECK ((auth_mode = ANY (ARRAY['token'::text, 'url_token'::text, 'signature'::text]))),
    CONSTRAINT webhooks_check CHECK (((secret_name IS NULL) <> (secret_ciphertext IS NULL))),
    CONSTRAINT webhooks_check1 CHECK (((auth_mode = 'signature'::text) = (signature_scheme IS NOT NULL))),
    CONSTRAINT webhooks_signature_scheme_check CHECK ((signature_scheme = ANY (ARRAY['github'::text, 'stripe'::text, 'standard_webhooks'::text, 'sentry'::text, 'pagerduty'::text, 'vercel'::text]))),
    CONSTRAINT webhooks_uid_check CHECK ((uid ~ '^[A-Za-z0-9]{22}$'::text))
);

--
-- Name: worker_connections; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.worker_connections (
    id text NOT NULL,
    team_uid text NOT NULL,
    worker_host text NOT NULL,
    replica text NOT NULL,
    connected_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    last_seen_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: worker_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.worker_keys (
    uid text NOT NULL,
    team_uid text NOT NULL,
    key_hash text NOT NULL,
    display_prefix text NOT NULL,
    name text NOT NULL,
    worker_id text NOT NULL,
    created_by_uid text,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    revoked_at timestamp with time zone
);

--
-- Name: worker_skills; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.worker_skills (
    team_uid text NOT NULL,
    worker_host text NOT NULL,
    skill_path text NOT NULL,
    name text NOT NULL,
    description text NOT NULL,
    base_prompt text NOT NULL,
    reported_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

--
-- Name: audit_log id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_log ALTER COLUMN id SET DEFAULT nextval('public.audit_log_id_seq'::regclass);

--
-- Name: agent_identities agent_identities_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_identities
    ADD CONSTRAINT agent_identities_pkey PRIMARY KEY (uid);

--
-- Name: agent_messages agent_messages_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_messages
    ADD CONSTRAINT agent_messages_pkey PRIMARY KEY (message_id);

--
-- Name: api_keys api_keys_key_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash);

--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (uid);

--
-- Name: artifacts artifacts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.artifacts
    ADD CONSTRAINT artifacts_pkey PRIMARY KEY (uid);

--
-- Name: audit_log audit_log_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_log
    ADD CONSTRAINT audit_log_pkey PRIMARY KEY (id);

--
-- Name: auth_failure_windows auth_failure_windows_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_failure_windows
    ADD CONSTRAINT auth_failure_windows_pkey PRIMARY KEY (client, window_start, shard);

--
-- Name: automations automations_factory_uid_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.automations
    ADD CONSTRAINT automations_factory_uid_name_key UNIQUE (factory_uid, name);

--
-- Name: automations automations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.automations
    ADD CONSTRAINT automations_pkey PRIMARY KEY (id);

--
-- Name: engines engines_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.engines
    ADD CONSTRAINT engines_pkey PRIMARY KEY (id);

--
-- Name: environment_access environment_access_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environment_access
    ADD CONSTRAINT environment_access_pkey PRIMARY KEY (environment_uid, team_uid);

--
-- Name: environment_snapshots environment_snapshots_environment_uid_team_uid_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environment_snapshots
    ADD CONSTRAINT environment_snapshots_environment_uid_team_uid_key_key UNIQUE (environment_uid, team_uid, key);

--
-- Name: environment_snapshots environment_snapshots_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environment_snapshots
    ADD CONSTRAINT environment_snapshots_pkey PRIMARY KEY (id);

--
-- Name: environments environments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environments
    ADD CONSTRAINT environments_pkey PRIMARY KEY (uid);

--
-- Name: environments environments_share_token_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environments
    ADD CONSTRAINT environments_share_token_hash_key UNIQUE (share_token_hash);

--
-- Name: factories factories_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.factories
    ADD CONSTRAINT factories_pkey PRIMARY KEY (uid);

--
-- Name: factories factories_team_uid_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.factories
    ADD CONSTRAINT factories_team_uid_name_key UNIQUE (team_uid, name);

--
-- Name: factory_skills factory_skills_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.factory_skills
    ADD CONSTRAINT factory_skills_pkey PRIMARY KEY (factory_uid, name);

--
-- Name: github_allowed_logins github_allowed_logins_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.github_allowed_logins
    ADD CONSTRAINT github_allowed_logins_pkey PRIMARY KEY (team_uid, installation_id, login);

--
-- Name: github_links github_links_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.github_links
    ADD CONSTRAINT github_links_pkey PRIMARY KEY (id);

--
-- Name: github_thread_replies github_thread_replies_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.github_thread_replies
    ADD CONSTRAINT github_thread_replies_pkey PRIMARY KEY (run_id);

--
-- Name: github_trigger_refusals github_trigger_refusals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.github_trigger_refusals
    ADD CONSTRAINT github_trigger_refusals_pkey PRIMARY KEY (repository, number, login, reason);

--
-- Name: github_trigger_starts github_trigger_starts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.github_trigger_starts
    ADD CONSTRAINT github_trigger_starts_pkey PRIMARY KEY (id);

--
-- Name: instance_settings instance_settings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.instance_settings
    ADD CONSTRAINT instance_settings_pkey PRIMARY KEY (key);

--
-- Name: mcp_server_shares mcp_server_shares_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mcp_server_shares
    ADD CONSTRAINT mcp_server_shares_pkey PRIMARY KEY (server_uid, team_uid);

--
-- Name: mcp_servers mcp_servers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mcp_servers
    ADD CONSTRAINT mcp_servers_pkey PRIMARY KEY (uid);

--
-- Name: mcp_servers mcp_servers_team_uid_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mcp_servers
    ADD CONSTRAINT mcp_servers_team_uid_name_key UNIQUE (team_uid, name);

--
-- Name: run_attachments run_attachments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_attachments
    ADD CONSTRAINT run_attachments_pkey PRIMARY KEY (run_id, "position");

--
-- Name: run_events run_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_events
    ADD CONSTRAINT run_events_pkey PRIMARY KEY (event_uuid);

--
-- Name: run_idempotency_keys run_idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_idempotency_keys
    ADD CONSTRAINT run_idempotency_keys_pkey PRIMARY KEY (team_uid, idempotency_key);

--
-- Name: run_inputs run_inputs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_inputs
    ADD CONSTRAINT run_inputs_pkey PRIMARY KEY (seq);

--
-- Name: run_scores run_scores_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_scores
    ADD CONSTRAINT run_scores_pkey PRIMARY KEY (scored_run_id, scorer_id, judge_run_id);

--
-- Name: run_share_links run_share_links_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_share_links
    ADD CONSTRAINT run_share_links_pkey PRIMARY KEY (id);

--
-- Name: run_share_links run_share_links_secret_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_share_links
    ADD CONSTRAINT run_share_links_secret_hash_key UNIQUE (secret_hash);

--
-- Name: run_transcript run_transcript_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_transcript
    ADD CONSTRAINT run_transcript_pkey PRIMARY KEY (seq);

--
-- Name: runners runners_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runners
    ADD CONSTRAINT runners_pkey PRIMARY KEY (uid);

--
-- Name: runners runners_team_uid_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runners
    ADD CONSTRAINT runners_team_uid_name_key UNIQUE (team_uid, name);

--
-- Name: runs runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (id);

--
-- Name: schedules schedules_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedules_pkey PRIMARY KEY (id);

--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

--
-- Name: scorers scorers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scorers
    ADD CONSTRAINT scorers_pkey PRIMARY KEY (id);

--
-- Name: scorers scorers_team_uid_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scorers
    ADD CONSTRAINT scorers_team_uid_name_key UNIQUE (team_uid, name);

--
-- Name: secret_grants secret_grants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.secret_grants
    ADD CONSTRAINT secret_grants_pkey PRIMARY KEY (team_uid, secret_name, grantee_type, grantee_uid);

--
-- Name: secrets secrets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.secrets
    ADD CONSTRAINT secrets_pkey PRIMARY KEY (team_uid, name);

--
-- Name: team_budgets team_budgets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.team_budgets
    ADD CONSTRAINT team_budgets_pkey PRIMARY KEY (team_uid);

--
-- Name: team_members team_members_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.team_members
    ADD CONSTRAINT team_members_pkey PRIMARY KEY (team_uid, user_uid);

--
-- Name: teams teams_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.teams
    ADD CONSTRAINT teams_name_key UNIQUE (name);

--
-- Name: teams teams_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.teams
    ADD CONSTRAINT teams_pkey PRIMARY KEY (uid);

--
-- Name: users users_email_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_email_key UNIQUE (email);

--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (uid);

--
-- Name: webhook_deliveries webhook_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (seq);

--
-- Name: webhook_rate_windows webhook_rate_windows_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_rate_windows
    ADD CONSTRAINT webhook_rate_windows_pkey PRIMARY KEY (webhook_uid, sender, window_start, kind, shard);

--
-- Name: webhook_replay_keys webhook_replay_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_replay_keys
    ADD CONSTRAINT webhook_replay_keys_pkey PRIMARY KEY (webhook_uid, replay_key);

--
-- Name: webhooks webhooks_factory_uid_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhooks
    ADD CONSTRAINT webhooks_factory_uid_name_key UNIQUE (factory_uid, name);

--
-- Name: webhooks webhooks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhooks
    ADD CONSTRAINT webhooks_pkey PRIMARY KEY (uid);

--
-- Name: worker_connections worker_connections_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.worker_connections
    ADD CONSTRAINT worker_connections_pkey PRIMARY KEY (id);

--
-- Name: worker_keys worker_keys_key_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.worker_keys
    ADD CONSTRAINT worker_keys_key_hash_key UNIQUE (key_hash);

--
-- Name: worker_keys worker_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.worker_keys
    ADD CONSTRAINT worker_keys_pkey PRIMARY KEY (uid);

--
-- Name: worker_skills worker_skills_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.worker_skills
    ADD CONSTRAINT worker_skills_pkey PRIMARY KEY (team_uid, worker_host, skill_path);

--
-- Name: agent_identities_team; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX agent_identities_team ON public.agent_identities USING btree (team_uid);

--
-- Name: agent_identities_team_age; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX agent_identities_team_age ON public.agent_identities USING btree (team_uid, created_at, uid);

--
-- Name: agent_identities_team_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX agent_identities_team_name ON public.agent_identities USING btree (team_uid, COALESCE(factory_uid, ''::text), name);

--
-- Name: agent_messages_inbox; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX agent_messages_inbox ON public.agent_messages USING btree (recipient_run_id, sent_at, message_id);

--
-- Name: api_keys_agent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_keys_agent ON public.api_keys USING btree (agent_uid) WHERE (agent_uid IS NOT NULL);

--
-- Name: api_keys_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_keys_user ON public.api_keys USING btree (user_uid) WHERE (user_uid IS NOT NULL);

--
-- Name: artifacts_canonical_url; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX artifacts_canonical_url ON public.artifacts USING btree (team_uid, canonical_url) WHERE (canonical_url IS NOT NULL);

--
-- Name: artifacts_run; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX artifacts_run ON public.artifacts USING btree (run_id, artifact_type);

--
-- Name: audit_log_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_log_at ON public.audit_log USING btree (at);

--
-- Name: audit_log_team_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_log_team_id ON public.audit_log USING btree (team_uid, id DESC);

--
-- Name: auth_failure_windows_start; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_failure_windows_start ON public.auth_failure_windows USING btree (window_start);

--
-- Name: automation_firings_delivery; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX automation_firings_delivery ON public.automation_firings USING btree (delivery_seq, automation_id) WHERE (delivery_seq IS NOT NULL);

--
-- Name: automation_firings_fired; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX automation_firings_fired ON public.automation_firings USING btree (automation_id, fired_at);

--
-- Name: automations_team; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX automations_team ON public.automations USING btree (team_uid, name);

--
-- Name: automations_webhooks; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX automations_webhooks ON public.automations USING gin (webhook_uids);

--
-- Name: environment_access_team; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX environment_access_team ON public.environment_access USING btree (team_uid);

--
-- Name: environment_snapshots_base; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX environment_snapshots_base ON public.environment_snapshots USING btree (environment_uid, team_uid, base_key, created_at DESC);

--
-- Name: environments_team; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX environments_team ON public.environments USING btree (team_uid);

--
-- Name: factories_default; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX factories_default ON public.factories USING btree (team_uid) WHERE is_default;

--
-- Name: factory_skills_team; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX factory_skills_team ON public.factory_skills USING btree (team_uid);

--
-- Name: github_links_installation; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX github_links_installation ON public.github_links USING btree (team_uid, installation_id) WHERE (installation_id IS NOT NULL);

--
-- Name: github_links_token; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX github_links_token ON public.github_links USING btree (team_uid) WHERE (token_secret IS NOT NULL);

--
-- Name: github_thread_replies_waiting; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX github_thread_replies_waiting ON public.github_thread_replies USING btree (run_id) WHERE (NOT outcome_posted);

--
-- Name: github_trigger_refusals_age; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX github_trigger_refusals_age ON public.github_trigger_refusals USING btree (created_at);

--
-- Name: github_trigger_starts_age; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX github_trigger_starts_age ON public.github_trigger_starts USING btree (started_at);

--
-- Name: github_trigger_starts_login; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX github_trigger_starts_login ON public.github_trigger_starts USING btree (login, started_at);

--
-- Name: github_trigger_starts_repository; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX github_trigger_starts_repository ON public.github_trigger_starts USING btree (repository, started_at);

--
-- Name: mcp_server_shares_team; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX mcp_server_shares_team ON public.mcp_server_shares USING btree (team_uid);

--
-- Name: run_events_run; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX run_events_run ON public.run_events USING btree (run_id, seq);

--
-- Name: run_idempotency_keys_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX run_idempotency_keys_created ON public.run_idempotency_keys USING btree (created_at);

--
-- Name: run_inputs_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX run_inputs_pending ON public.run_inputs USING btree (run_id, seq) WHERE (delivered_at IS NULL);

--
-- Name: run_overview_changes_team; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX run_overview_changes_team ON public.run_overview_changes USING btree (team_uid);

--
-- Name: run_overview_hours_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX run_overview_hours_key ON public.run_overview_hours USING btree (team_uid, hour, kind, left_hour, state, model_id, error_code, schedule_id, bin) NULLS NOT DISTINCT;

--
-- Name: run_scores_judge; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX run_scores_judge ON public.run_scores USING btree (judge_run_id);

--
-- Name: run_share_links_active; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX run_share_links_active ON public.run_share_links USING btree (run_id) WHERE (revoked_at IS NULL);

--
-- Name: run_transcript_run; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX run_transcript_run ON public.run_transcript USING btree (run_id, seq);

--
-- Name: runs_active; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_active ON public.runs USING btree (team_uid) WHERE (state = ANY (ARRAY['PENDING'::text, 'CLAIMED'::text, 'INPROGRESS'::text]));

--
-- Name: runs_automation; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_automation ON public.runs USING btree (automation_id, updated_at) WHERE (automation_id IS NOT NULL);

--
-- Name: runs_conversation; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_conversation ON public.runs USING btree (conversation_id) WHERE (conversation_id IS NOT NULL);

--
-- Name: runs_dispatch; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_dispatch ON public.runs USING btree (created_at, id) WHERE ((state = 'QUEUED'::text) AND (worker_host IS NULL));

--
-- Name: runs_ended_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_ended_at ON public.runs USING btree (ended_at) WHERE (ended_at IS NOT NULL);

--
-- Name: runs_environment; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_environment ON public.runs USING btree (team_uid, environment_id);

--
-- Name: runs_factory; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_factory ON public.runs USING btree (factory_uid, updated_at) WHERE (factory_uid IS NOT NULL);

--
-- Name: runs_leases; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_leases ON public.runs USING btree (lease_expires_at) WHERE (state = ANY (ARRAY['PENDING'::text, 'CLAIMED'::text, 'INPROGRESS'::text]));

--
-- Name: runs_metadata; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_metadata ON public.runs USING gin (metadata jsonb_path_ops);

--
-- Name: runs_parent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_parent ON public.runs USING btree (parent_run_id) WHERE (parent_run_id IS NOT NULL);

--
-- Name: runs_schedule_tick; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX runs_schedule_tick ON public.runs USING btree (schedule_id, schedule_tick) WHERE (schedule_id IS NOT NULL);

--
-- Name: runs_search; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_search ON public.runs USING gin (search_text public.gin_trgm_ops);

--
-- Name: runs_team_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_team_created ON public.runs USING btree (team_uid, created_at DESC, id DESC);

--
-- Name: runs_team_overview; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_team_overview ON public.runs USING btree (team_uid, created_at) INCLUDE (state, started_at, ended_at, model_id, schedule_id, inference_cost, error_code);

--
-- Name: runs_team_overview_open; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_team_overview_open ON public.runs USING btree (team_uid, created_at) INCLUDE (state, claimed_at, agent_seconds, started_at, ended_at, model_id, schedule_id, inference_cost, error_code) WHERE (state = ANY (ARRAY['QUEUED'::text, 'PENDING'::text, 'CLAIMED'::text, 'INPROGRESS'::text]));

--
-- Name: runs_team_skill; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_team_skill ON public.runs USING btree (team_uid, ((skill_spec IS NULL)), skill_spec, id);

--
-- Name: runs_team_state; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_team_state ON public.runs USING btree (team_uid, state, updated_at DESC);

--
-- Name: runs_team_title; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_team_title ON public.runs USING btree (team_uid, title, id);

--
-- Name: runs_team_updated; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_team_updated ON public.runs USING btree (team_uid, updated_at DESC, id DESC);

--
-- Name: runs_worker_queue; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_worker_queue ON public.runs USING btree (team_uid, worker_host, created_at, id) WHERE ((state = 'QUEUED'::text) AND (worker_host IS NOT NULL));

--
-- Name: schedules_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX schedules_due ON public.schedules USING btree (next_run_at) WHERE enabled;

--
-- Name: schedules_team_name; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX schedules_team_name ON public.schedules USING btree (team_uid, name, id);

--
-- Name: team_members_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX team_members_user ON public.team_members USING btree (user_uid);

--
-- Name: webhook_deliveries_identity; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_deliveries_identity ON public.webhook_deliveries USING btree (webhook_uid, delivery_id) WHERE ((status = 'Accepted'::text) AND (NOT identity_reused));

--
-- Name: webhook_deliveries_log; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_log ON public.webhook_deliveries USING btree (webhook_uid, seq DESC);

--
-- Name: webhook_deliveries_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_pending ON public.webhook_deliveries USING btree (seq) WHERE ((status = 'Accepted'::text) AND (evaluated_at IS NULL));

--
-- Name: webhook_replay_keys_expiry; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_replay_keys_expiry ON public.webhook_replay_keys USING btree (expires_at) WHERE (expires_at IS NOT NULL);

--
-- Name: webhooks_team; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhooks_team ON public.webhooks USING btree (team_uid, name);

--
-- Name: worker_connections_team; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX worker_connections_team ON public.worker_connections USING btree (team_uid, worker_host);

--
-- Name: worker_keys_team; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX worker_keys_team ON public.worker_keys USING btree (team_uid, created_at, uid);

--
-- Name: run_events run_events_activity; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER run_events_activity AFTER INSERT ON public.run_events FOR EACH ROW WHEN ((new.event_type <> 'oz_run_created'::text)) EXECUTE FUNCTION public.hangar_notify_run_activity();

--
-- Name: run_inputs run_inputs_added; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER run_inputs_added AFTER INSERT ON public.run_inputs FOR EACH ROW EXECUTE FUNCTION public.hangar_notify_run_input();

--
-- Name: run_transcript run_transcript_activity; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER run_transcript_activity AFTER INSERT ON public.run_transcript FOR EACH ROW EXECUTE FUNCTION public.hangar_notify_run_activity();

--
-- Name: runs runs_cancelled; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER runs_cancelled AFTER UPDATE OF state ON public.runs FOR EACH ROW WHEN (((new.state = 'CANCELLED'::text) AND (old.state <> 'CANCELLED'::text))) EXECUTE FUNCTION public.hangar_notify_run_cancelled();

--
-- Name: runs runs_capacity_freed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER runs_capacity_freed AFTER UPDATE OF state ON public.runs FOR EACH ROW WHEN (((old.state = ANY (ARRAY['PENDING'::text, 'CLAIMED'::text, 'INPROGRESS'::text])) AND (new.state <> ALL (ARRAY['PENDING'::text, 'CLAIMED'::text, 'INPROGRESS'::text])))) EXECUTE FUNCTION public.hangar_notify_dispatch();

--
-- Name: runs runs_overview_deleted; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER runs_overview_deleted AFTER DELETE ON public.runs FOR EACH ROW WHEN ((old.state = ANY (ARRAY['SUCCEEDED'::text, 'FAILED'::text, 'BLOCKED'::text, 'ERROR'::text, 'CANCELLED'::text]))) EXECUTE FUNCTION public.hangar_run_overview_change();

--
-- Name: runs runs_overview_inserted; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER runs_overview_inserted AFTER INSERT ON public.runs FOR EACH ROW WHEN ((new.state = ANY (ARRAY['SUCCEEDED'::text, 'FAILED'::text, 'BLOCKED'::text, 'ERROR'::text, 'CANCELLED'::text]))) EXECUTE FUNCTION public.hangar_run_overview_change();

--
-- Name: runs runs_overview_updated; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER runs_overview_updated AFTER UPDATE ON public.runs FOR EACH ROW WHEN ((((old.state = ANY (ARRAY['SUCCEEDED'::text, 'FAILED'::text, 'BLOCKED'::text, 'ERROR'::text, 'CANCELLED'::text])) OR (new.state = ANY (ARRAY['SUCCEEDED'::text, 'FAILED'::text, 'BLOCKED'::text, 'ERROR'::text, 'CANCELLED'::text]))) AND (((((((((((old.state IS DISTINCT FROM new.state) OR (old.team_uid IS DISTINCT FROM new.team_uid)) OR (old.created_at IS DISTINCT FROM new.created_at)) OR (old.started_at IS DISTINCT FROM new.started_at)) OR (old.ended_at IS DISTINCT FROM new.ended_at)) OR (old.model_id IS DISTINCT FROM new.model_id)) OR (old.error_code IS DISTINCT FROM new.error_code)) OR (old.schedule_id IS DISTINCT FROM new.schedule_id)) OR (old.inference_cost IS DISTINCT FROM new.inference_cost)) OR (old.claimed_at IS DISTINCT FROM new.claimed_at)) OR (old.agent_seconds IS DISTINCT FROM new.agent_seconds)))) EXECUTE FUNCTION public.hangar_run_overview_change();

--
-- Name: runs runs_queued_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER runs_queued_update AFTER UPDATE OF state ON public.runs FOR EACH ROW WHEN (((new.state = 'QUEUED'::text) AND (old.state <> 'QUEUED'::text))) EXECUTE FUNCTION public.hangar_notify_dispatch();

--
-- Name: runs runs_times; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER runs_times BEFORE UPDATE ON public.runs FOR EACH ROW WHEN ((old.state IS DISTINCT FROM new.state)) EXECUTE FUNCTION public.hangar_run_times();

--
-- Name: webhooks webhooks_forget_replay_keys; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER webhooks_forget_replay_keys AFTER DELETE ON public.webhooks FOR EACH ROW EXECUTE FUNCTION public.webhook_replay_keys_forget();

--
-- Name: agent_identities agent_identities_factory_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_identities
    ADD CONSTRAINT agent_identities_factory_uid_fkey FOREIGN KEY (factory_uid) REFERENCES public.factories(uid) ON DELETE SET NULL;

--
-- Name: agent_identities agent_identities_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_identities
    ADD CONSTRAINT agent_identities_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: agent_messages agent_messages_recipient_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_messages
    ADD CONSTRAINT agent_messages_recipient_run_id_fkey FOREIGN KEY (recipient_run_id) REFERENCES public.runs(id) ON DELETE CASCADE;

--
-- Name: api_keys api_keys_agent_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_agent_uid_fkey FOREIGN KEY (agent_uid) REFERENCES public.agent_identities(uid) ON DELETE CASCADE;

--
-- Name: api_keys api_keys_user_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_user_uid_fkey FOREIGN KEY (user_uid) REFERENCES public.users(uid) ON DELETE CASCADE;

--
-- Name: artifacts artifacts_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.artifacts
    ADD CONSTRAINT artifacts_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;

--
-- Name: artifacts artifacts_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.artifacts
    ADD CONSTRAINT artifacts_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: automation_firings automation_firings_delivery_seq_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.automation_firings
    ADD CONSTRAINT automation_firings_delivery_seq_fkey FOREIGN KEY (delivery_seq) REFERENCES public.webhook_deliveries(seq) ON DELETE CASCADE;

--
-- Name: automations automations_factory_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.automations
    ADD CONSTRAINT automations_factory_uid_fkey FOREIGN KEY (factory_uid) REFERENCES public.factories(uid) ON DELETE CASCADE;

--
-- Name: automations automations_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.automations
    ADD CONSTRAINT automations_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: environment_access environment_access_environment_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environment_access
    ADD CONSTRAINT environment_access_environment_uid_fkey FOREIGN KEY (environment_uid) REFERENCES public.environments(uid) ON DELETE CASCADE;

--
-- Name: environment_access environment_access_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environment_access
    ADD CONSTRAINT environment_access_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: environment_snapshots environment_snapshots_environment_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environment_snapshots
    ADD CONSTRAINT environment_snapshots_environment_uid_fkey FOREIGN KEY (environment_uid) REFERENCES public.environments(uid) ON DELETE CASCADE;

--
-- Name: environment_snapshots environment_snapshots_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environment_snapshots
    ADD CONSTRAINT environment_snapshots_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: environments environments_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environments
    ADD CONSTRAINT environments_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: factories factories_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.factories
    ADD CONSTRAINT factories_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: factory_skills factory_skills_factory_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.factory_skills
    ADD CONSTRAINT factory_skills_factory_uid_fkey FOREIGN KEY (factory_uid) REFERENCES public.factories(uid) ON DELETE CASCADE;

--
-- Name: factory_skills factory_skills_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.factory_skills
    ADD CONSTRAINT factory_skills_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: github_allowed_logins github_allowed_logins_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.github_allowed_logins
    ADD CONSTRAINT github_allowed_logins_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: github_allowed_logins github_allowed_logins_user_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.github_allowed_logins
    ADD CONSTRAINT github_allowed_logins_user_uid_fkey FOREIGN KEY (user_uid) REFERENCES public.users(uid) ON DELETE CASCADE;

--
-- Name: github_links github_links_service_user_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.github_links
    ADD CONSTRAINT github_links_service_user_uid_fkey FOREIGN KEY (service_user_uid) REFERENCES public.users(uid) ON DELETE SET NULL;

--
-- Name: github_links github_links_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.github_links
    ADD CONSTRAINT github_links_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: github_thread_replies github_thread_replies_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.github_thread_replies
    ADD CONSTRAINT github_thread_replies_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;

--
-- Name: mcp_server_shares mcp_server_shares_server_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mcp_server_shares
    ADD CONSTRAINT mcp_server_shares_server_uid_fkey FOREIGN KEY (server_uid) REFERENCES public.mcp_servers(uid) ON DELETE CASCADE;

--
-- Name: mcp_server_shares mcp_server_shares_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mcp_server_shares
    ADD CONSTRAINT mcp_server_shares_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: mcp_servers mcp_servers_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mcp_servers
    ADD CONSTRAINT mcp_servers_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: run_attachments run_attachments_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_attachments
    ADD CONSTRAINT run_attachments_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;

--
-- Name: run_events run_events_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_events
    ADD CONSTRAINT run_events_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;

--
-- Name: run_idempotency_keys run_idempotency_keys_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_idempotency_keys
    ADD CONSTRAINT run_idempotency_keys_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: run_inputs run_inputs_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_inputs
    ADD CONSTRAINT run_inputs_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;

--
-- Name: run_scores run_scores_judge_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_scores
    ADD CONSTRAINT run_scores_judge_run_id_fkey FOREIGN KEY (judge_run_id) REFERENCES public.runs(id) ON DELETE CASCADE;

--
-- Name: run_scores run_scores_scored_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_scores
    ADD CONSTRAINT run_scores_scored_run_id_fkey FOREIGN KEY (scored_run_id) REFERENCES public.runs(id) ON DELETE CASCADE;

--
-- Name: run_scores run_scores_scorer_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_scores
    ADD CONSTRAINT run_scores_scorer_id_fkey FOREIGN KEY (scorer_id) REFERENCES public.scorers(id) ON DELETE CASCADE;

--
-- Name: run_share_links run_share_links_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_share_links
    ADD CONSTRAINT run_share_links_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;

--
-- Name: run_transcript run_transcript_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_transcript
    ADD CONSTRAINT run_transcript_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;

--
-- Name: runners runners_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runners
    ADD CONSTRAINT runners_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: runs runs_parent_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_parent_run_id_fkey FOREIGN KEY (parent_run_id) REFERENCES public.runs(id) ON DELETE SET NULL;

--
-- Name: runs runs_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: schedules schedules_automation_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedules_automation_id_fkey FOREIGN KEY (automation_id) REFERENCES public.automations(id) ON DELETE CASCADE;

--
-- Name: schedules schedules_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedules_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: scorers scorers_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scorers
    ADD CONSTRAINT scorers_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: secret_grants secret_grants_team_uid_secret_name_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.secret_grants
    ADD CONSTRAINT secret_grants_team_uid_secret_name_fkey FOREIGN KEY (team_uid, secret_name) REFERENCES public.secrets(team_uid, name) ON UPDATE CASCADE ON DELETE CASCADE;

--
-- Name: secrets secrets_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.secrets
    ADD CONSTRAINT secrets_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: team_budgets team_budgets_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.team_budgets
    ADD CONSTRAINT team_budgets_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: team_members team_members_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.team_members
    ADD CONSTRAINT team_members_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: team_members team_members_user_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.team_members
    ADD CONSTRAINT team_members_user_uid_fkey FOREIGN KEY (user_uid) REFERENCES public.users(uid) ON DELETE CASCADE;

--
-- Name: webhook_deliveries webhook_deliveries_webhook_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_webhook_uid_fkey FOREIGN KEY (webhook_uid) REFERENCES public.webhooks(uid) ON DELETE CASCADE;

--
-- Name: webhooks webhooks_factory_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhooks
    ADD CONSTRAINT webhooks_factory_uid_fkey FOREIGN KEY (factory_uid) REFERENCES public.factories(uid) ON DELETE CASCADE;

--
-- Name: webhooks webhooks_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhooks
    ADD CONSTRAINT webhooks_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: worker_connections worker_connections_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.worker_connections
    ADD CONSTRAINT worker_connections_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: worker_keys worker_keys_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.worker_keys
    ADD CONSTRAINT worker_keys_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- Name: worker_skills worker_skills_team_uid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.worker_skills
    ADD CONSTRAINT worker_skills_team_uid_fkey FOREIGN KEY (team_uid) REFERENCES public.teams(uid) ON DELETE CASCADE;

--
-- PostgreSQL database dump complete
--
