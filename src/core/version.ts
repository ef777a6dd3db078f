import packageJson from '../../package.json';

/** The product version, from package.json (bundled at build time). */
export const LOOPX_VERSION: string = packageJson.version;
