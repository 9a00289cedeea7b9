-- MCP sessions any replica of an agent serves (docs/runtime.md, "Sessions"): the protocol state
-- an initialize left (its params as JSON, the version answered), who opened it, and when it was
-- last used, by which idle sessions end on every replica.
CREATE TABLE pallas_mcp_session (
  deployment       text        NOT NULL,
  agent            text        NOT NULL,
  id               text        NOT NULL,
  initialize       text        NOT NULL,
  protocol_version text        NOT NULL,
  caller           text,
  created_at       timestamptz NOT NULL,
  last_used_at     timestamptz NOT NULL,
  PRIMARY KEY (deployment, agent, id)
);

CREATE INDEX pallas_mcp_session_last_used ON pallas_mcp_session (deployment, agent, last_used_at);

-- The events of resumable streams (MCP 2025-11-25, "Resumability and Redelivery"), kept a few
-- minutes for a client that reconnects with Last-Event-ID, on any replica.
CREATE TABLE pallas_mcp_event (
  deployment text        NOT NULL,
  agent      text        NOT NULL,
  session_id text        NOT NULL,
  stream     text        NOT NULL,
  seq        bigint      NOT NULL,
  message    text        NOT NULL,
  last       boolean     NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (deployment, agent, session_id, stream, seq)
);

CREATE INDEX pallas_mcp_event_created ON pallas_mcp_event (created_at);
