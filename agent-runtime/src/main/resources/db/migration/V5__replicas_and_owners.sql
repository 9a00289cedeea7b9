-- Turns whose pod died are run again (docs/runtime.md, "Sessions"): each replica notes that it is
-- alive every few seconds, and the request that opened a resumable stream is kept as the stream's
-- event 0 with the replica that runs it. A client that resumes a stream whose replica has stopped
-- noting itself, and that has no last event, has its request taken over by the replica it reached.
CREATE TABLE pallas_replica (
  id      text        PRIMARY KEY,
  seen_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE pallas_mcp_event ADD COLUMN replica text;

-- The caller each MCP session belongs to, with inbound authentication (docs/runtime.md, "Inbound
-- authentication"): every replica refuses it to any other caller.
ALTER TABLE pallas_mcp_session ADD COLUMN owner text;
