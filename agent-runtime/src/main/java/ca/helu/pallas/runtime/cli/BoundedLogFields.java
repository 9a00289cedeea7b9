package ca.helu.pallas.runtime.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.JsonGeneratorDelegate;
import java.io.IOException;
import net.logstash.logback.decorate.JsonGeneratorDecorator;

/**
 * Bounds every string of a JSON log line (the message, an exception's text, any field): a line may
 * quote what a client sent, through our words or a library's, and such a quote must never be
 * unbounded (docs/runtime.md, "Errors callers see": a 2 MiB notification is not logged whole). Past
 * {@link #MAX_CHARS} a string is cut and says how much was left out.
 */
public final class BoundedLogFields implements JsonGeneratorDecorator {
  static final int MAX_CHARS = 16 * 1024;

  @Override
  public JsonGenerator decorate(JsonGenerator generator) {
    return new JsonGeneratorDelegate(generator, false) {
      @Override
      public void writeString(String text) throws IOException {
        super.writeString(bound(text));
      }

      @Override
      public void writeString(char[] text, int offset, int length) throws IOException {
        if (length <= MAX_CHARS) {
          super.writeString(text, offset, length);
        } else {
          super.writeString(bound(new String(text, offset, length)));
        }
      }

      @Override
      public void writeStringField(String field, String text) throws IOException {
        writeFieldName(field);
        writeString(text);
      }
    };
  }

  /** {@code text} if short enough, else its start and how many characters were left out. */
  static String bound(String text) {
    if (text == null || text.length() <= MAX_CHARS) {
      return text;
    }
    return text.substring(0, MAX_CHARS)
        + "... ("
        + (text.length() - MAX_CHARS)
        + " more characters not logged)";
  }
}
