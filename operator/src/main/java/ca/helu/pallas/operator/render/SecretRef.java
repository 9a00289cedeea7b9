package ca.helu.pallas.operator.render;

import ca.helu.pallas.api.SecretValue.SecretKeyRef;

/** A Secret key a deployment uses, with the field that names it (for messages). */
public record SecretRef(SecretKeyRef ref, String field) {}
