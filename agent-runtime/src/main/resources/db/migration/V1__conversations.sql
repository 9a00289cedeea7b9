-- Conversation histories (docs/runtime.md, "Conversations"): one row per conversation, keyed by
-- the PallasDeployment, the agent and the MCP session ('' for a shared agent's one conversation),
-- and its turns, each one row written in one transaction with its conversation's totals.
CREATE TABLE pallas_conversation (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  deployment   text        NOT NULL,
  agent        text        NOT NULL,
  session_id   text        NOT NULL,
  caller       text,
  chars        bigint      NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_turn_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (deployment, agent, session_id)
);

-- the sweep of expired conversations
CREATE INDEX pallas_conversation_last_turn ON pallas_conversation (last_turn_at);

CREATE TABLE pallas_turn (
  conversation_id bigint      NOT NULL REFERENCES pallas_conversation (id) ON DELETE CASCADE,
  seq             bigint      NOT NULL,
  caller          text,
  -- the turn's messages as LangChain4j's ChatMessageSerializer writes them (text, images, tool
  -- calls and results)
  messages        text        NOT NULL,
  chars           bigint      NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, seq)
);
