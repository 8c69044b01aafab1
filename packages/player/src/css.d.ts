// CSS files are imported as text (rollup.config.js inlines them) and injected by styles.ts.
declare module '*.css' {
  const text: string;
  export default text;
}
