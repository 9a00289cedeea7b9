package ca.helu.pallas.runtime.llm;

import ca.helu.pallas.api.Models;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.Provider;
import ca.helu.pallas.api.ProviderSpec;
import java.util.Optional;

/** Provider and model of a model string: openai.gpt-4o, anthropic.x, or a built-in name. */
public record ModelRef(String provider, String name) {
  public static ModelRef of(String model) {
    if (Models.isBuiltIn(model)) {
      return new ModelRef(model, model);
    }
    int dot = model.indexOf('.');
    return new ModelRef(model.substring(0, dot), model.substring(dot + 1));
  }

  /** provider.name: one per model, whichever agents use it. */
  public String key() {
    return provider + "." + name;
  }

  /** The LLM provider it names, or empty: a built-in model. */
  public Optional<Provider> llm() {
    return Provider.byId(provider);
  }

  /** The manifest's section for this model's provider, or null (built-in, or none given). */
  public ProviderSpec providerSpec(PallasDeploymentSpec spec) {
    return llm().map(p -> p.of(spec)).orElse(null);
  }
}
