package ca.helu.pallas.runtime.llm;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.Provider;
import ca.helu.pallas.api.ProviderSpec;
import ca.helu.pallas.runtime.config.Secrets;
import ca.helu.pallas.runtime.loop.ModelClient;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses an agent's model from the manifest: a built-in test model, a provider's model with
 * retries, or, when the provider cannot be used as configured, a model whose every call fails with
 * the reason.
 */
public final class ModelChooser {
  private static final Logger LOG = LoggerFactory.getLogger(ModelChooser.class);

  /** The agent's model, or why it cannot have one (then every call and get_health say so). */
  public record Choice(ModelClient client, String unavailable) {}

  private final Secrets secrets;
  private final Duration slowModelDelay;
  private final Retry retry;

  public ModelChooser(Secrets secrets, Duration slowModelDelay, Retry retry) {
    this.secrets = secrets;
    this.slowModelDelay = slowModelDelay;
    this.retry = retry;
  }

  public Choice choose(PallasDeploymentSpec spec, AgentSpec agent) {
    ModelRef m = ModelRef.of(spec.modelOf(agent));
    Provider llm = m.llm().orElse(null);
    if (llm == null) {
      return new Choice(BuiltInModels.create(m.provider(), slowModelDelay), null);
    }
    ProviderSpec provider = llm.of(spec);
    String problem = ProviderModel.configurationProblem(llm, provider, secrets);
    if (problem == null) {
      try {
        ModelClient client =
            ProviderModel.create(
                llm,
                m.name(),
                provider,
                secrets,
                agent.effectiveRequestParams(),
                retry.timeout(),
                agent.name());
        return new Choice(new RetryingModel(client, retry), null);
      } catch (RuntimeException e) {
        problem = "cannot use " + m.key() + ": " + e.getMessage();
      }
    }
    // the agent still serves: calls get this error and get_health says error (docs/contract.md)
    LOG.error("agent {} cannot process requests: {}", agent.name(), problem);
    return new Choice(new UnavailableModel(m.provider(), m.name(), problem), problem);
  }

  /** A model that cannot be used; every call fails with the reason. */
  private record UnavailableModel(String provider, String modelName, String reason)
      implements ModelClient {
    @Override
    public ChatResponse chat(ChatRequest request) {
      throw new LlmException(reason);
    }
  }
}
