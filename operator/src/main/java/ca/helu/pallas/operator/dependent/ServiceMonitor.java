package ca.helu.pallas.operator.dependent;

import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Version;
import java.util.Map;

/**
 * The Prometheus Operator's ServiceMonitor (monitoring.coreos.com/v1), typed so that a client for
 * it needs no API discovery: the CRD may be installed after the operator starts. The spec is kept
 * as a map: the operator writes three fields and must not drop the others.
 */
@Group("monitoring.coreos.com")
@Version("v1")
@Kind("ServiceMonitor")
@Plural("servicemonitors")
public class ServiceMonitor extends CustomResource<Map<String, Object>, Map<String, Object>>
    implements Namespaced {}
