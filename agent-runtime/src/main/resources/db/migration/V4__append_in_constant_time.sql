-- A turn's append costs the same however long its conversation is (docs/benchmarks.md,
-- "Conversation store"): the conversation's total is kept up to date by each append instead of
-- summed over all its turns, and the oldest turns are looked at only when the total passes the
-- bound. Same contract as V2: the turn, the trimming and the totals together or not at all.
CREATE OR REPLACE FUNCTION pallas_append(
    p_deployment text, p_agent text, p_session text, p_caller text, p_messages text,
    p_chars bigint, p_bound bigint, p_ttl_millis bigint)
  RETURNS void
  LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
  v_chars bigint;
  v_gone bigint;
BEGIN
  DELETE FROM pallas_conversation
    WHERE deployment = p_deployment AND agent = p_agent AND session_id = p_session
      AND last_turn_at < now() - p_ttl_millis * interval '1 millisecond';
  -- the conversation's row, locked until the transaction ends: appends to it wait for each other
  INSERT INTO pallas_conversation (deployment, agent, session_id, caller, chars)
    VALUES (p_deployment, p_agent, p_session, p_caller, p_chars)
    ON CONFLICT (deployment, agent, session_id) DO UPDATE
      SET last_turn_at = now(), caller = coalesce(excluded.caller, pallas_conversation.caller),
          chars = pallas_conversation.chars + excluded.chars
    RETURNING id, chars INTO v_id, v_chars;
  -- the newest turn's number through the primary key's index, not a scan of the turns
  INSERT INTO pallas_turn (conversation_id, seq, caller, messages, chars)
    VALUES (v_id, coalesce((SELECT seq FROM pallas_turn WHERE conversation_id = v_id
                             ORDER BY seq DESC LIMIT 1), 0) + 1,
            p_caller, p_messages, p_chars);
  IF v_chars > p_bound THEN
    -- the oldest whole turns past the bound go: those whose newer turns, themselves included,
    -- hold more than the bound (the new turn too, when it alone is larger)
    WITH gone AS (
      DELETE FROM pallas_turn
        WHERE conversation_id = v_id AND seq <= coalesce(
          (SELECT max(seq) FROM (
             SELECT seq, sum(chars) OVER (ORDER BY seq DESC) AS newer
               FROM pallas_turn WHERE conversation_id = v_id) s
           WHERE newer > p_bound), 0)
        RETURNING chars)
    SELECT coalesce(sum(chars), 0) INTO v_gone FROM gone;
    UPDATE pallas_conversation SET chars = chars - v_gone WHERE id = v_id;
  END IF;
END
$$;
