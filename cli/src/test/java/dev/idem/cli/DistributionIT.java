package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The distribution as an operator unpacks it. */
class DistributionIT {

    @Test
    void theTarballUnpacksIntoOneFolderWithTheLauncherAndItsLibraries() throws Exception {
        Path folder = Path.of(System.getProperty("idem.cli.distribution"));
        Path tarball = folder.resolveSibling(folder.getFileName() + "-bin.tar.gz");
        assertThat(tarball).exists();

        Process tar = new ProcessBuilder("tar", "tzf", tarball.toString()).redirectErrorStream(true).start();
        List<String> entries = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        assertThat(tar.waitFor(30, TimeUnit.SECONDS)).isTrue();

        String top = folder.getFileName() + "/";
        assertThat(entries).as("no bin/ and lib/ spilled into the folder it is unpacked in")
                .allSatisfy(entry -> assertThat(entry).startsWith(top))
                .contains(top + "bin/idem")
                .anySatisfy(entry -> assertThat(entry).startsWith(top + "lib/idem-cli-"));
    }
}
