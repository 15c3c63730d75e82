package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class SmokeTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  @Test
  void executesACommand() throws Exception {
    var response =
        agent.postJson(
            "/api/bash/execute_bash_command", "{\"command\":\"echo hi; echo err >&2; exit 3\"}");
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    var body = AgentFixture.json(response);
    assertThat(body)
        .containsEntry("stdout", "hi\n")
        .containsEntry("stderr", "err\n")
        .containsEntry("exit_code", 3);
  }

  @Test
  void sessionKeepsState() throws Exception {
    var first =
        agent.postJson(
            "/api/bash/execute_bash_command",
            "{\"command\":\"cd /tmp; export X=42; f(){ echo fn$1; }\",\"session\":\"s1\"}");
    assertThat(AgentFixture.json(first)).as(first.body()).containsEntry("exit_code", 0);
    var response =
        agent.postJson(
            "/api/bash/execute_bash_command",
            "{\"command\":\"echo $PWD $X; f 7\",\"session\":\"s1\"}");
    assertThat(AgentFixture.json(response))
        .as(response.body())
        .containsEntry("stdout", "/tmp 42\nfn7\n")
        .containsEntry("exit_code", 0);
  }
}
