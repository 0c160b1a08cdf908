// java.util.regex as the oracle for spillguard's translation of Java patterns.
//
// One request a line on stdin: a pattern, then the inputs to search, tab-separated,
// each written as UTF-16 code units in hex (four digits each), so any string (lone
// surrogates, line terminators) travels intact. One answer a line on stdout:
// "E" when Pattern.compile throws, else "M" and, per input, the spans of every
// Matcher.find() ("start-end" in UTF-16 code units, comma-separated; empty: no
// match; "T": the match took too many steps, or Java failed).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class RegexOracle {
    private static final int MAX_MATCHES = 16;
    private static final long MAX_STEPS = 2_000_000L;

    /** An input that stops a runaway match: every character read is a step. */
    private static final class Budget implements CharSequence {
        private final String text;
        private long steps;

        Budget(String text) {
            this.text = text;
        }

        @Override
        public char charAt(int index) {
            if (++steps > MAX_STEPS) {
                throw new IllegalStateException("budget");
            }
            return text.charAt(index);
        }

        @Override
        public int length() {
            return text.length();
        }

        @Override
        public CharSequence subSequence(int start, int end) {
            return text.subSequence(start, end);
        }

        @Override
        public String toString() {
            return text;
        }
    }

    private static String decode(String hex) {
        char[] units = new char[hex.length() / 4];
        for (int i = 0; i < units.length; i++) {
            units[i] = (char) Integer.parseInt(hex.substring(4 * i, 4 * i + 4), 16);
        }
        return new String(units);
    }

    private static String spans(Pattern pattern, String text) {
        StringBuilder out = new StringBuilder();
        try {
            Matcher matcher = pattern.matcher(new Budget(text));
            for (int found = 0; found < MAX_MATCHES && matcher.find(); found++) {
                if (found > 0) {
                    out.append(',');
                }
                out.append(matcher.start()).append('-').append(matcher.end());
            }
        } catch (RuntimeException | StackOverflowError error) {
            // Out of steps, or a JDK bug on a contrived pattern: not compared.
            return "T";
        }
        return out.toString();
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintStream out = new PrintStream(new java.io.BufferedOutputStream(System.out, 1 << 16), false, "US-ASCII");
        String line;
        while ((line = in.readLine()) != null) {
            String[] fields = line.split("\t", -1);
            Pattern pattern;
            try {
                pattern = Pattern.compile(decode(fields[0]));
            } catch (RuntimeException | StackOverflowError error) {
                out.print("E\n");
                continue;
            }
            StringBuilder answer = new StringBuilder("M");
            for (int i = 1; i < fields.length; i++) {
                answer.append('\t').append(spans(pattern, decode(fields[i])));
            }
            out.print(answer.append('\n'));
        }
        out.flush();
    }
}
