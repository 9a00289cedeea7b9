package ca.helu.pallas.runtime.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Agents' identities in one process and the caller they carry (docs/runtime.md, "Agents calling
 * agents"): a key is known only as the agent's that holds it, and only by the agents it calls; the
 * carried caller is read as sent, or refused when it cannot be a name.
 */
class AgentIdentitiesTest {
  private final LocalAgentKeys keys = new LocalAgentKeys(List.of("lead", "helper", "other"));

  @Test
  void anAgentsKeyNamesItToTheAgentsItCallsOnly() throws Exception {
    AgentTokens helper = keys.acceptedBy(Set.of("lead"));
    assertThat(helper.identify(keys.keyOf("lead"))).contains(new AgentTokens.Identity("lead"));
    assertThatThrownBy(() -> helper.identify(keys.keyOf("other")))
        .isInstanceOf(AuthFailure.class)
        .hasMessage("agent 'other' does not list this agent among its servers");
    assertThatThrownBy(() -> helper.identify(LocalAgentKeys.PREFIX + "00".repeat(32)))
        .hasMessage("the agent key is not one of this fleet's");
    assertThat(helper.identify("a-callers-own-token")).isEmpty();
    assertThat(helper.identify(keys.registryKey()))
        .as("the registry, an observer to every agent")
        .contains(AgentTokens.Identity.OBSERVER);
    assertThat(keys.keyOf("lead"))
        .as("another process's keys are others")
        .isNotEqualTo(new LocalAgentKeys(List.of("lead")).keyOf("lead"));
  }

  @Test
  void theCarriedCallerIsReadAsSentOrTheAgentItselfWhenNoneIs() throws Exception {
    Map<String, String> sent = new HashMap<>(CarriedCaller.headers("alice b@x", "daedalus"));
    Caller carried = CarriedCaller.read("lead", sent::get);
    assertThat(carried.name()).isEqualTo("alice b@x");
    assertThat(carried.client()).isEqualTo("daedalus");
    assertThat(carried.via()).isEqualTo("lead");
    assertThat(carried.principal()).as("the session is the agent's").isEqualTo("agent:lead");

    Caller own = CarriedCaller.read("lead", name -> null);
    assertThat(own.name()).isEqualTo("agent:lead");
    assertThat(own.via()).isEqualTo("lead");

    sent.put(CarriedCaller.NAME_HEADER, "alice%0Aforged");
    assertThatThrownBy(() -> CarriedCaller.read("lead", sent::get))
        .isInstanceOf(AuthFailure.class)
        .hasMessage("the Pallas-Caller header holds control characters or is too long");
    sent.put(CarriedCaller.NAME_HEADER, "%zz");
    assertThatThrownBy(() -> CarriedCaller.read("lead", sent::get))
        .hasMessage("the Pallas-Caller header is not percent-encoded");
  }

  @Test
  void agentsSharingAnIdentityAreToldApartByTheAgentTheyName() throws Exception {
    AgentTokens.Identity group = new AgentTokens.Identity(Set.of("lead", "scout"));
    assertThat(group.agent("scout")).isEqualTo("scout");
    assertThatThrownBy(() -> group.agent(null))
        .isInstanceOf(AuthFailure.class)
        .hasMessage(
            "the token's ServiceAccount is shared by agents lead, scout: the request must name"
                + " its agent in Pallas-Agent");
    assertThatThrownBy(() -> group.agent("other"))
        .isInstanceOf(AuthFailure.class)
        .hasMessage("the token is not that of an agent named in Pallas-Agent");

    AgentTokens.Identity own = new AgentTokens.Identity("lead");
    assertThat(own.agent(null)).as("one agent: no name needed").isEqualTo("lead");
    assertThat(own.agent("lead")).isEqualTo("lead");
    assertThatThrownBy(() -> own.agent("scout")).isInstanceOf(AuthFailure.class);
  }
}
