package ca.helu.pallas.runtime.http;

/** A request refused at the edge: its HTTP status, JSON-RPC error code and message of ours. */
record Refusal(int status, int code, String message) {}
