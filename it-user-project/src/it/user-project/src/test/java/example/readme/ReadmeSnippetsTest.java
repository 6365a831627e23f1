package example.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README's Java and YAML examples cannot drift from code that compiles and runs: every
 * {@code ```java} and {@code ```yaml} block follows a line {@code <!-- snippet: <path>#<tag> -->}
 * (path from the repository root, into this project or its siblings {@code micronaut-project} and
 * {@code spring-project}) and
 * must equal the regions between {@code // tag::<tag>[]} and {@code // end::<tag>[]} ({@code #} in
 * YAML) of that file, each without its common indentation, several regions joined by one blank line. The README's dependency blocks name Idem
 * artifacts one of the two projects builds with, at its version.
 */
class ReadmeSnippetsTest {

    private static final String PROJECTS = "it-user-project/src/it/";
    /** The plain user project (this one) and the Micronaut and Spring Boot user projects beside it. */
    private static final List<String> PROJECT_NAMES = List.of("user-project", "micronaut-project", "spring-project");
    private static final Map<String, List<String>> EXAMPLE_FOLDERS = Map.of(
            "user-project", List.of("src/main/java/example/readme", "src/test/java/example/readme"),
            "micronaut-project", List.of("src/main/java/example/micronaut", "src/test/java/example/micronaut",
                    "src/main/resources"),
            "spring-project", List.of("src/main/java/example/spring", "src/test/java/example/spring",
                    "src/main/resources"));
    /** The README's blocks in these languages are cut from the projects' files. */
    private static final Set<String> CUT_LANGUAGES = Set.of("java", "yaml");
    private static final Pattern MARKER = Pattern.compile("<!-- snippet: " + Pattern.quote(PROJECTS)
            + "(user-project|micronaut-project|spring-project)/(\\S+)#(\\S+) -->");
    private static final Pattern TAG = Pattern.compile("^\\s*(?://|#) (tag|end)::([a-z0-9-]+)\\[\\]\\s*$");
    private static final Pattern IDEM_ARTIFACT = Pattern.compile(
            "<groupId>dev\\.idem</groupId>\\s*<artifactId>([^<]+)</artifactId>(?:\\s*<version>([^<]+)</version>)?");

    private final Path basedir = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().normalize();

    /** A project's folder: this one, or its sibling (the invoker clones both side by side). */
    private Path project(String name) {
        Path dir = basedir.resolveSibling(name);
        assertTrue(Files.isDirectory(dir), "no project " + name + " beside " + basedir);
        return dir;
    }

    /** The README and the guide's pages, by name (README.md, docs/guide/kafka.md, ...). */
    private static Map<String, String> pages() throws IOException {
        String readme = System.getProperty("idem.readme");
        String guide = System.getProperty("idem.guide");
        assertTrue(readme != null && !readme.isBlank() && guide != null && !guide.isBlank(),
                "system properties idem.readme (the README's path) and idem.guide (the guide's folder) are not set: "
                + "run this project through Idem's it-user-project module");
        Map<String, String> pages = new java.util.LinkedHashMap<>();
        pages.put("README.md", Files.readString(Path.of(readme), StandardCharsets.UTF_8));
        try (Stream<Path> files = Files.list(Path.of(guide))) {
            for (Path page : files.filter(f -> f.toString().endsWith(".md")).sorted().toList()) {
                pages.put("docs/guide/" + page.getFileName(), Files.readString(page, StandardCharsets.UTF_8));
            }
        }
        assertTrue(pages.size() > 1, "no pages in the guide folder " + guide);
        return pages;
    }

    /** Every page's text, one after another. */
    private static String readme() throws IOException {
        return String.join("\n", pages().values());
    }

    /** A fenced block of the README and the line before it. */
    private record Block(int line, String marker, String language, String text) {
    }

    private static List<Block> blocks(String readme) {
        List<String> lines = readme.lines().toList();
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("```") && lines.get(i).length() > 3) {
                int start = i;
                StringBuilder text = new StringBuilder();
                for (i++; i < lines.size() && !lines.get(i).equals("```"); i++) {
                    text.append(lines.get(i).stripTrailing()).append('\n');
                }
                blocks.add(new Block(start + 1, start == 0 ? "" : lines.get(start - 1), lines.get(start).substring(3),
                        text.toString()));
            }
        }
        return blocks;
    }

    /** The regions of {@code file} tagged {@code tag}, each without its common indentation. */
    static String regions(List<String> file, String tag) {
        List<String> regions = new ArrayList<>();
        List<String> region = null;
        for (String line : file) {
            Matcher matcher = TAG.matcher(line);
            if (matcher.matches() && matcher.group(2).equals(tag)) {
                if (matcher.group(1).equals("tag")) {
                    region = new ArrayList<>();
                } else if (region != null) {
                    regions.add(dedent(region));
                    region = null;
                }
            } else if (region != null && !TAG.matcher(line).matches()) {
                region.add(line);
            }
        }
        return regions.isEmpty() ? null : String.join("\n", regions);
    }

    private static String dedent(List<String> lines) {
        int indent = lines.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length())
                .min().orElse(0);
        return lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent).stripTrailing())
                .map(l -> l + "\n").collect(Collectors.joining());
    }

    @Test
    void everyJavaAndYamlBlockOfTheReadmeIsCutFromTestedSource() throws IOException {
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, String> page : pages().entrySet()) {
            for (Block block : blocks(page.getValue())) {
                if (!CUT_LANGUAGES.contains(block.language())) {
                    continue;
                }
                Matcher marker = MARKER.matcher(block.marker().strip());
                if (!marker.matches()) {
                    problems.add(page.getKey() + " line " + block.line() + ": a " + block.language()
                            + " block without a line '<!-- snippet: " + PROJECTS
                            + "<user-project|micronaut-project|spring-project>/<path>#<tag> -->' before it; write it in one of those "
                            + "projects' sources and mark it");
                    continue;
                }
                String tag = marker.group(3);
                String file = marker.group(1) + "/" + marker.group(2);
                Path source = project(marker.group(1)).resolve(marker.group(2));
                if (!Files.isRegularFile(source)) {
                    problems.add(page.getKey() + " line " + block.line() + ": no file " + source);
                    continue;
                }
                String expected = regions(Files.readAllLines(source, StandardCharsets.UTF_8), tag);
                if (expected == null) {
                    problems.add(page.getKey() + " line " + block.line() + ": no region '" + tag + "' in " + source);
                } else if (!expected.equals(block.text())) {
                    problems.add(page.getKey() + " line " + block.line() + " differs from " + file + "#" + tag
                            + "; the README should have:\n```" + block.language() + "\n" + expected + "```");
                }
            }
        }
        if (!problems.isEmpty()) {
            fail(String.join("\n\n", problems));
        }
    }

    @Test
    void everyTaggedRegionIsShownInTheReadme() throws IOException {
        String readme = readme();
        Set<String> unshown = new TreeSet<>();
        int regions = 0;
        for (String project : PROJECT_NAMES) {
            for (String folder : EXAMPLE_FOLDERS.get(project)) {
                Path dir = project(project).resolve(folder);
                if (!Files.isDirectory(dir)) {
                    continue;
                }
                try (Stream<Path> files = Files.list(dir)) {
                    for (Path file : files.toList()) {
                        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                            Matcher tag = TAG.matcher(line);
                            String reference = project + "/" + folder + "/" + file.getFileName() + "#"
                                    + (tag.matches() ? tag.group(2) : "");
                            if (tag.matches() && tag.group(1).equals("tag")) {
                                regions++;
                            }
                            if (tag.matches() && !readme.contains("<!-- snippet: " + PROJECTS + reference + " -->")) {
                                unshown.add(reference);
                            }
                        }
                    }
                }
            }
        }
        assertTrue(regions > 0, "no tagged regions found in " + PROJECT_NAMES);
        assertEquals(Set.of(), unshown, "regions no README block shows");
    }

    @Test
    void theReadmesDependencyBlocksNameIdemArtifactsThisProjectBuildsWithAtItsVersion() throws IOException {
        String version = System.getProperty("idem.version");
        Set<String> built = new TreeSet<>();
        for (String project : PROJECT_NAMES) {
            Matcher own = IDEM_ARTIFACT.matcher(Files.readString(project(project).resolve("pom.xml"),
                    StandardCharsets.UTF_8));
            while (own.find()) {
                built.add(own.group(1));
            }
        }
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, String> page : pages().entrySet()) {
            for (Block block : blocks(page.getValue())) {
                Matcher artifact = IDEM_ARTIFACT.matcher(block.text());
                while (block.language().equals("xml") && artifact.find()) {
                    if (!built.contains(artifact.group(1))) {
                        problems.add(page.getKey() + " line " + block.line() + ": " + artifact.group(1) + " is none of " + built);
                    }
                    if (artifact.group(2) != null && !artifact.group(2).equals(version)) {
                        problems.add(page.getKey() + " line " + block.line() + ": " + artifact.group(1) + " at " + artifact.group(2)
                                + ", but Idem's version is " + version);
                    }
                }
            }
        }
        Matcher gradle = Pattern.compile("dev\\.idem:(idem-[a-z-]+):([^\"\\s)]+)").matcher(readme());
        while (gradle.find()) {
            if (!built.contains(gradle.group(1)) || !gradle.group(2).equals(version)) {
                problems.add("README: " + gradle.group() + ", but this project builds with " + built + " at " + version);
            }
        }
        assertTrue(built.size() >= 4, "Idem artifacts found in this project's pom: " + built);
        assertEquals(List.of(), problems);
    }
}
