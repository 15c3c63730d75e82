package dev.paddock.backend.remote;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.ExposedUrl;
import org.junit.jupiter.api.Test;

class RuntimeUrlsTest {
  @Test
  void aUrlWhosePathStartsWithTheRuntimeIdIsPathMode() {
    String url = "https://runtime.example.com/rt42";
    assertThat(RuntimeUrls.pathMode(url, "rt42")).isTrue();
    assertThat(RuntimeUrls.service(url, "rt42", "vscode"))
        .isEqualTo("https://runtime.example.com/rt42/vscode");
    assertThat(RuntimeUrls.service(url, "rt42", "work-1"))
        .isEqualTo("https://runtime.example.com/rt42/work-1");
  }

  @Test
  void anyOtherUrlIsSubdomainMode() {
    String url = "https://rt42.runtime.example.com";
    assertThat(RuntimeUrls.pathMode(url, "rt42")).isFalse();
    assertThat(RuntimeUrls.pathMode("https://h/rt421", "rt42")).isFalse();
    assertThat(RuntimeUrls.service(url, "rt42", "work-2"))
        .isEqualTo("https://work-2-rt42.runtime.example.com");
  }

  @Test
  void theAgentIsTheReportedUrlAndServicesComeOnlyWhenAsked() {
    assertThat(RuntimeUrls.exposed("http://127.0.0.1:4100", "rt", false))
        .extracting(ExposedUrl::name, ExposedUrl::url)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("AGENT_SERVER", "http://127.0.0.1:4100"));
    assertThat(RuntimeUrls.exposed("https://h/rt", "rt", true))
        .extracting(ExposedUrl::name)
        .containsExactly("AGENT_SERVER", "VSCODE", "WORKER_1", "WORKER_2");
  }
}
