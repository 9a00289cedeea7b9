-- One turn appended in one round trip (docs/benchmarks.md, "Conversation store"): a function runs
-- in its statement's transaction, so the turn, the trimming of the oldest whole turns past the
-- bound and the conversation's totals are stored together or not at all. An expired conversation
-- not yet swept is deleted first, so its turns are never continued.
CREATE FUNCTION pallas_append(
    p_deployment text, p_agent text, p_session text, p_caller text, p_messages text,
    p_chars bigint, p_bound bigint, p_ttl_millis bigint)
  RETURNS void
  LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
BEGIN
  DELETE FROM pallas_conversation
    WHERE deployment = p_deployment AND agent = p_agent AND session_id = p_session
      AND last_turn_at < now() - p_ttl_millis * interval '1 millisecond';
  -- the conversation's row, locked until the transaction ends: appends to it wait for each other
  INSERT INTO pallas_conversation (deployment, agent, session_id, caller)
    VALUES (p_deployment, p_agent, p_session, p_caller)
    ON CONFLICT (deployment, agent, session_id) DO UPDATE
      SET last_turn_at = now(), caller = coalesce(excluded.caller, pallas_conversation.caller)
    RETURNING id INTO v_id;
  INSERT INTO pallas_turn (conversation_id, seq, caller, messages, chars)
    SELECT v_id, coalesce(max(seq), 0) + 1, p_caller, p_messages, p_chars
      FROM pallas_turn WHERE conversation_id = v_id;
  -- the oldest whole turns past the bound go: those whose newer turns, themselves included, hold
  -- more than the bound (the new turn too, when it alone is larger)
  DELETE FROM pallas_turn
    WHERE conversation_id = v_id AND seq <= coalesce(
      (SELECT max(seq) FROM (
         SELECT seq, sum(chars) OVER (ORDER BY seq DESC) AS newer
           FROM pallas_turn WHERE conversation_id = v_id) s
       WHERE newer > p_bound), 0);
  UPDATE pallas_conversation
    SET chars = (SELECT coalesce(sum(chars), 0) FROM pallas_turn WHERE conversation_id = v_id)
    WHERE id = v_id;
END
$$;
