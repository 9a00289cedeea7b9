package ca.helu.pallas.runtime.loop;

/**
 * Who a call is for, as inbound authentication named them: what an agent carries to the agents of
 * its fleet it calls on the caller's behalf (docs/runtime.md, "Agents calling agents").
 *
 * @param client the OAuth client the caller came through, or null
 */
public record CallerId(String name, String client) {}
