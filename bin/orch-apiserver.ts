import { main } from '../src/server/cli.ts';

await main(process.argv.slice(2));
