/**
 * Where a person waits on the CLI: a line on standard error saying what is happening, with the seconds counting on
 * a terminal. Standard output stays the answer alone, for pipes and `--json`.
 */
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export async function withProgress<T>(label: string, work: Promise<T>, stream = process.stderr): Promise<T> {
  if (!stream.isTTY) {
    stream.write(`${label}…\n`);
    return work;
  }
  const started = Date.now();
  let frame = 0;
  const draw = () => {
    const seconds = Math.floor((Date.now() - started) / 1000);
    stream.write(`\r${FRAMES[frame++ % FRAMES.length]} ${label}… ${seconds ? `${seconds} s` : ''}\x1b[K`);
  };
  draw();
  const timer = setInterval(draw, 100);
  try {
    return await work;
  } finally {
    clearInterval(timer);
    stream.write('\r\x1b[K');
  }
}
