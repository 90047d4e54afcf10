// The embeddable API: start a server in-process (tests, tools) and the building blocks it exposes.

export { startServer, type RunningServer, type ServerOptions } from './server/server.ts';
export { namingProfile, type Naming, type NamingProfileName } from './naming.ts';
